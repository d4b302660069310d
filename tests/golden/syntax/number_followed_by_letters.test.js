// id-number-followed-by-letters
// Number followed by letters
// #4f46e5
function test_save() {
  wait(3abc)
}
