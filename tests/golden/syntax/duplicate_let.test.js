// id-duplicate-let
// Duplicate let
// #4f46e5
function test_save() {
  let name = "a"
  click(name)
  let name = "b"
}
