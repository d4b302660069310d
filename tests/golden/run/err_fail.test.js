// fail(message) stops the scenario with a ScenarioError at the call.
function check_login(ok) {
  if (!ok) {
    fail("login did not complete")
  }
  return "logged in"
}

function test_main() {
  log(check_login(true))
  try {
    fail({ code: 1 })
  } catch (e) {
    log(e.name, e.message)
  }
  return check_login(false)
}
