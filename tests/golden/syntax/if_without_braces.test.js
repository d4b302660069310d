// id-if-without-braces
// If without braces
// #4f46e5
function test_save() {
  if (ready) click("Save")
}
