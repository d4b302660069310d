// id-missing-brace-eof
// Missing brace eof
// #4f46e5
function test_save() {
  if (ready) {
    click("Save")
  }
