// id-save-draft
// Save a draft
// #4f46e
function test_save() {
  click("Save")
}
