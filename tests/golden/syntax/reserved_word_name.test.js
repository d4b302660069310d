// id-reserved-word-name
// Reserved word name
// #4f46e5
function test_save() {
  let new = 1
}
