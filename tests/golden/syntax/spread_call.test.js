// id-spread-call
// Spread call
// #4f46e5
function test_save() {
  let args = [1]
  log(...args)
}
