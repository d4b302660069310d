// id-nested-function
// Nested function
// #4f46e5
function test_save() {
  function inner() {
    click("Save")
  }
  inner()
}
