// o.k = e, o["k"] = e, a[i] = e and compound forms on both.
function test_main() {
  let o = {}
  o.name = "Save"
  o["data-id"] = 3
  o.count = 1
  o.count += 4
  o["count"] *= 2
  o.name += "!"
  log(o)
  log(o.missing, o["also missing"])
  let a = [1, 2, 3]
  a[0] = "x"
  a[1] -= 10
  a[3] = "appended at the length"
  log(a, a.length)
  // Deliberate: JavaScript would leave holes (undefined); the language has no
  // undefined, so writing past the end (other than at the length) is a RangeError.
  try {
    a[9] = "far"
  } catch (e) {
    log(e.name, e.message)
  }
  let grid = [[0, 0], [0, 0]]
  grid[1][0] = 5
  grid[0][1] += 2
  log(grid)
  let nested = { inner: { list: [1] } }
  nested.inner.list[0] += 1
  nested.inner.flag = true
  return nested
}
