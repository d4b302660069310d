// id-void
// Void
// #4f46e5
function test_save() {
  log(void 0)
}
