// id-test-function-with-parameters
// Test function with parameters
// #4f46e5
function test_save(user) {
  fill("Name", user)
}
