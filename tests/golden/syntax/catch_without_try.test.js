// id-catch-without-try
// Catch without try
// #4f46e5
function test_save() {
  log(1)
  catch (e) { log(e) }
}
