// Rethrowing the caught object keeps its name; errors in catch reach the outer try.
function risky() {
  try {
    throw { name: "DataError", message: "row 3 is empty" }
  } catch (e) {
    log("inner caught", e.name)
    throw e
  }
}

function test_main() {
  try {
    risky()
  } catch (e) {
    log("outer caught", e.name, e.message)
  }
  try {
    try {
      throw "first"
    } catch (e) {
      throw "second from catch"
    } finally {
      log("inner finally")
    }
  } catch (e) {
    log("outer got", e.message)
  }
  try {
    try {
      throw "only finally here"
    } finally {
      log("cleanup")
    }
  } catch (e) {
    log("propagated", e.message)
  }
  risky()
  return "unreachable"
}
