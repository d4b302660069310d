// id-logical-assignment
// Logical assignment
// #4f46e5
function test_save() {
  let name = env("NAME")
  name ??= "Ada"
}
