// finally runs when the try or the catch returns, and its own return wins.
function returns_in_try() {
  try {
    return "from try"
  } finally {
    log("finally after try's return")
  }
}

function returns_in_catch() {
  try {
    throw "boom"
  } catch (e) {
    return "from catch: " + e.message
  } finally {
    log("finally after catch's return")
  }
}

function finally_wins() {
  try {
    return "try"
  } finally {
    return "finally"
  }
}

function finally_after_error() {
  try {
    throw { name: "Oops", message: "bad" }
  } finally {
    log("finally while an error passes")
  }
}

function test_main() {
  log(returns_in_try())
  log(returns_in_catch())
  log(finally_wins())
  try {
    finally_after_error()
  } catch (e) {
    log("caught", e)
  }
  return "ok"
}
