// id-save-draft
// Save a draft
// red
function test_save() {
  click("Save")
}
