// break and continue act on the innermost loop only.
function test_main() {
  let i = 0
  while (true) {
    i += 1
    if (i % 2 === 0) {
      continue
    }
    if (i > 7) {
      break
    }
    log("odd", i)
  }
  log("after while", i)
  for (const x of [1, 2, 3, 4, 5]) {
    if (x === 2) {
      continue
    }
    if (x === 4) {
      break
    }
    log("x", x)
  }
  let found = []
  for (const row of [[1, 2, 3], [4, 5, 6]]) {
    for (const v of row) {
      if (v === 2 || v === 5) {
        break
      }
      found.push(v)
    }
  }
  return found
}
