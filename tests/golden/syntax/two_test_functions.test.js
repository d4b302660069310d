// id-two-test-functions
// Two test functions
// #4f46e5
function test_save() {
  click("Save")
}

function test_cancel() {
  click("Cancel")
}
