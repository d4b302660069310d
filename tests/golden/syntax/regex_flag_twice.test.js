// id-regex-flag-twice
// Regex flag twice
// #4f46e5
function test_save() {
  expect_url(/checkout/gg)
}
