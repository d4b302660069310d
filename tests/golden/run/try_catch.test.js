// catch binds {name, message} for every error; the binding is optional.
function test_main() {
  try {
    log("before")
    log(missing_variable)
    log("not reached")
  } catch (e) {
    log(e.name)
    log(e.message)
    log(e)
  }
  try {
    let x = 1 - "1"
  } catch (err) {
    log(err.name + ": " + err.message)
  }
  try {
    throw "plain"
  } catch {
    log("caught without a binding")
  }
  try {
    fail("from fail()")
  } catch (e) {
    log(e)
  }
  try {
    expect_equal(1, 2)
  } catch (e) {
    log(e)
  }
  let e = "outer e"
  try {
    throw "inner"
  } catch (e) {
    log(e.message)
  }
  log(e)
  try {
    log("no error")
  } catch (e) {
    log("never")
  }
  return "done"
}
