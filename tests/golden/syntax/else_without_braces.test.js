// id-else-without-braces
// Else without braces
// #4f46e5
function test_save() {
  if (ready) {
    click("Save")
  } else click("Cancel")
}
