// id-bad-hex-escape
// Bad hex escape
// #4f46e5
function test_save() {
  fill("Name", "caf\xe")
}
