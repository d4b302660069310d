// id-regex-variable-lookbehind
// Regex variable lookbehind
// #4f46e5
function test_save() {
  expect_text("Price", /(?<=\$\s*)\d+/)
}
