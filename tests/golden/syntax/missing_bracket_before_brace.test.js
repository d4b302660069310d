// id-missing-bracket-before-brace
// Missing bracket
// #4f46e5
function test_save() {
  select("Colours", ["red", "green"
}
