// id-missing-brace-eof-function
// Missing brace eof function
// #4f46e5
function test_save() {
  click("Save")

function helper() {
}
