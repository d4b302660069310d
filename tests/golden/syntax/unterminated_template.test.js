// id-unterminated-template
// Unterminated template
// #4f46e5
function test_save() {
  log(`Hello ${name}
}
