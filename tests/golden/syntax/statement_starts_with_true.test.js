// id-statement-starts-with-true
// Statement starts with true
// #4f46e5
function test_save() {
  true
}
