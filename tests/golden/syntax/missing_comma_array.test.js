// id-missing-comma-array
// Missing comma array
// #4f46e5
function test_save() {
  select("Colours", ["red" "green"])
}
