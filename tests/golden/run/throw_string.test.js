// An uncaught throw of a string fails as a ScenarioError at the throw statement.
function check(value) {
  if (value < 0) {
    throw "negative value: " + value
  }
  return value
}

function test_main() {
  log(check(1))
  check(-2)
  return "unreachable"
}
