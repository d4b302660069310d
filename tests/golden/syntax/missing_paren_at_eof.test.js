// id-missing-paren-at-eof
// Missing paren at eof
// #4f46e5
function test_save() {
  click("Save"
