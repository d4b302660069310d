// id-rest-parameter
// Rest parameter
// #4f46e5
function total(...rest) {
  return rest
}
function test_save() {
  log(total(1))
}
