// id-assign-in-if
// Assign in if
// #4f46e5
function test_save() {
  let ready = true
  if (ready = false) {
    click("Save")
  }
}
