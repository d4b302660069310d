// id-bitwise-or
// Bitwise or
// #4f46e5
function test_save() {
  if (a | b) {
  }
}
