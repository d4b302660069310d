// slice(start, end) copies; negative indices count from the end.
function test_main() {
  let a = [0, 1, 2, 3, 4]
  log(a.slice(1), a.slice(1, 3), a.slice(-2), a.slice(-3, -1), a.slice(1, -1))
  log(a.slice(), a.slice(3, 1), a.slice(-100), a.slice(100), a.slice(0.5, 2.5))
  let part = a.slice(0, 2)
  part[0] = "changed"
  log(a, part)
  return [[1], [2]].slice(1)
}
