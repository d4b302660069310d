// id-arrow-function-two-params
// Arrow function with two parameters
// #4f46e5
function test_sum() {
  let add = (a, b) => a + b
}
