// id-unterminated-string
// Unterminated string
// #4f46e5
function test_save() {
  click("Save)
}
