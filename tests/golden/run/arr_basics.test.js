// Array literals, length, indexing (out of range reads as null), nesting, aliasing.
function test_main() {
  let a = [1, "two", null, [3, 4], { five: 5 }, true,]
  log(a.length, a[0], a[1], a[2], a[3][1], a[4].five, a[5])
  log(a[6], a[-1], a[1.5], [].length, [[]].length)
  let b = a
  b[0] = "changed"
  log(a[0])
  let i = 1
  return [a[i + 2][0], a[a.length - 1]]
}
