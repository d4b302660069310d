// id-unknown-operator
// Unknown operator
// #4f46e5
function test_save() {
  let mask = flags & 4
}
