// id-missing-comma-arguments
// Missing comma arguments
// #4f46e5
function test_save() {
  fill("Name" "Ada")
}
