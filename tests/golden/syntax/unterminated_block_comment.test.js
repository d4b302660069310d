// id-unterminated-block-comment
// Unterminated block comment
// #4f46e5
function test_save() {
  /* TODO: click
  click("Save")
}
