// id-statement-starts-with-string
// statement_starts_with_string
// #4f46e5
function test_main() {
  "abc".length
}
