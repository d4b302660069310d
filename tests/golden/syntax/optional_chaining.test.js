// id-optional-chaining
// Optional chaining
// #4f46e5
function test_save() {
  let o = null
  log(o?.a)
}
