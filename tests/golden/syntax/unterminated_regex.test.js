// id-unterminated-regex
// Unterminated regex
// #4f46e5
function test_save() {
  expect_url(/checkout)
}
