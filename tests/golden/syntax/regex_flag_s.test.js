// id-regex-flag-s
// Regex flag s
// #4f46e5
function test_save() {
  expect_text("Notes", /a.b/s)
}
