// id-exponent-assign
// Exponent assign
// #4f46e5
function test_save() {
  let x = 2
  x **= 2
}
