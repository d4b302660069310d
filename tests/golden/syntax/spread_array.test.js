// id-spread-array
// Spread array
// #4f46e5
function test_save() {
  let a = [1]
  log([...a])
}
