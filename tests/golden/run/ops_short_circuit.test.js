// The right operand is not evaluated when the left decides: these calls would fail.
function explode() {
  fail("must not be called")
}

function test_main() {
  log(false && explode(), 0 && no_such_function(), null && undefined_variable)
  log(true || explode(), "x" || no_such_function(), 1 || undefined_variable)
  log(0 ?? explode(), "" ?? explode(), false ?? undefined_variable)
  log(true ? "yes" : explode(), false ? explode() : "no")
  let calls = []
  let r = calls.push("left") && calls.push("right")
  log(r, calls)
  return null ?? explode()
}
