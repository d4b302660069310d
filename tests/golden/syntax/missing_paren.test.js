// id-missing-paren
// Missing paren
// #4f46e5
function test_save() {
  click("Save"
  expect_visible("Saved")
}
