// while re-evaluates its condition before each iteration.
function test_main() {
  let i = 0
  let seen = []
  while (i < 5) {
    seen.push(i)
    i += 1
  }
  log(seen, i)
  while (false) {
    log("never")
  }
  let n = 27
  let steps = 0
  while (n !== 1) {
    if (n % 2 === 0) {
      n /= 2
    } else {
      n = 3 * n + 1
    }
    steps += 1
  }
  return steps
}
