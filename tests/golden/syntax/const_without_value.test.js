// id-const-without-value
// Const without value
// #4f46e5
function test_save() {
  const label
  click(label)
}
