// id-else-without-if
// Else without if
// #4f46e5
function test_save() {
  log(1)
  else { log(2) }
}
