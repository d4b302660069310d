// unique() differs on every call and carries the run's tag; now() is the clock in ms.
function test_main() {
  let a = unique()
  let b = unique()
  let c = unique("user-")
  log(a, b, c, a === b, a !== b)
  log(now(), now() === now())
  try {
    unique(5)
  } catch (e) {
    log(e.name, e.message)
  }
  return [unique("x"), unique()]
}
