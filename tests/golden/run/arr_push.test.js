// push appends any number of values and returns the new length.
function test_main() {
  let a = []
  log(a.push("x"), a.push(), a.push(1, [2], { k: 3 }), a)
  let n = a.push(null)
  log(n, a.length, a)
  let copy = a.slice()
  copy.push("only in copy")
  log(a.length, copy.length)
  return a.push(a.length)
}
