// id-default-parameter
// Default parameter
// #4f46e5
function add(a, b = 1) {
  return a + b
}
function test_save() {
  log(add(1, 2))
}
