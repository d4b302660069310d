// id-try-without-catch
// Try without catch
// #4f46e5
function test_save() {
  try {
    click("Save")
  }
  log("done")
}
