// id-save-draft
//
// #4f46e5
function test_save() {
  click("Save")
}
