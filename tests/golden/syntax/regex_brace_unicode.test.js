// id-regex-brace-unicode
// Regex brace unicode
// #4f46e5
function test_save() {
  expect_text("Title", /\u{41}bc/)
}
