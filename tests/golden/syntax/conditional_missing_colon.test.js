// id-missing-colon
// Missing colon
// #4f46e5
function test_save() {
  let label = ready ? "Save"
}
