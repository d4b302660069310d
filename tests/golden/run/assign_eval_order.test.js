// JavaScript reads the target's current value before evaluating the right-hand
// side: o.n += bump(o) adds to the old o.n (1), not to what bump() stored (100).
function bump(o) {
  o.n = 100
  return 1
}

function test_main() {
  let o = { n: 1 }
  o.n += bump(o)
  log(o.n)
  let a = [10, 20]
  a[0] += bump(o)
  log(a, o.n)
  return o
}
