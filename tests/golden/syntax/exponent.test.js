// id-exponent
// Exponent
// #4f46e5
function test_save() {
  log(2 ** 3)
}
