// assert(cond, message?) passes on any truthy value.
function test_main() {
  log(assert(true), assert(1, "one"), assert("x"), assert([]), assert({}))
  try {
    assert(0)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    assert("", "name must not be empty")
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    assert(null, 404)
  } catch (e) {
    log(e.name, e.message)
  }
  let count = 0
  assert(count > 0, "count should be positive")
  return "unreachable"
}
