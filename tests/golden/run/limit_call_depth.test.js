// 200 active calls (test_main included) are fine; one more is a RangeError naming
// the call chain, catchable, and never a Python RecursionError.
function down(n) {
  if (n === 0) {
    return "bottom"
  }
  return down(n - 1)
}

function ping(n) {
  return pong(n)
}

function pong(n) {
  return ping(n)
}

function countdown(n) {
  return countdown(n + 1)
}

function test_main() {
  log(down(198))
  try {
    down(199)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    ping(1)
  } catch (e) {
    log(e.name, e.message)
  }
  log("survived")
  return countdown(0)
}
