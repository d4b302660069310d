// id-tagged-template
// Tagged template
// #4f46e5
function test_save() {
  log`hi`
}
