// range(n) is 0..n-1; range(a, b) is a..b-1; empty when the end is not above the start.
function test_main() {
  log(range(3), range(0), range(-2), range(1.0))
  log(range(2, 5), range(-2, 1), range(5, 2), range(3, 3))
  let total = 0
  for (const i of range(101)) {
    total += i
  }
  log(total)
  try {
    range(1.5)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    range(1, 2, 3)
  } catch (e) {
    log(e.name, e.message)
  }
  return range("3")
}
