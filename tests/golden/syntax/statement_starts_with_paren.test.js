// id-statement-starts-with-paren
// Statement starts with paren
// #4f46e5
function test_save() {
  (a)
}
