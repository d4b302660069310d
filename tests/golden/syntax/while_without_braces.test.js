// id-while-without-braces
// While without braces
// #4f46e5
function test_save() {
  while (busy) wait(100)
}
