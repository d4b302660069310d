// let / const / let without a value; block scoping.
function test_main() {
  let a = 1
  const b = "two"
  let c
  log(a, b, c)
  a = a + 1
  c = [a, b]
  log(a, c)
  if (true) {
    let a = "inner"
    const b = 99
    log(a, b)
  }
  log(a, b)
  let d = null
  log(d === c, d === null)
  return { a, b, c, d }
}
