// id-typeof
// Typeof
// #4f46e5
function test_save() {
  log(typeof 1)
}
