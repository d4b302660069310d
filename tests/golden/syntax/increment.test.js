// id-increment
// Increment
// #4f46e5
function test_save() {
  let count = 0
  count++
}
