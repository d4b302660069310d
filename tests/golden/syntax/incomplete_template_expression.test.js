// id-incomplete-template-expression
// Incomplete template expression
// #4f46e5
function test_save() {
  log(`total: ${count +}`)
}
