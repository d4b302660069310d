// id-Bad_Slug
// Save a draft
// #4f46e5
function test_save() {
  click("Save")
}
