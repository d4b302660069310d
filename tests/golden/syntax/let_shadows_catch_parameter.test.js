// id-let-shadows-catch-parameter
// Let shadows the catch parameter
// #4f46e5
function test_save() {
  try {
    fail("x")
  } catch (err) {
    let err = 2
  }
}
