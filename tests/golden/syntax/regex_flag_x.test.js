// id-regex-flag-x
// Regex flag x
// #4f46e5
function test_save() {
  expect_url(/checkout/x)
}
