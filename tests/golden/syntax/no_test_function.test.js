// id-no-test-function
// No test function
// #4f46e5
function save() {
  click("Save")
}
