// id-empty-template-expression
// Empty template expression
// #4f46e5
function test_save() {
  log(`total: ${}`)
}
