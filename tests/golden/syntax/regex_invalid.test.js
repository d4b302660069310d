// id-regex-invalid
// Regex invalid
// #4f46e5
function test_save() {
  expect_text("Price", /(\d+/)
}
