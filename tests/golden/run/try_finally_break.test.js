// finally runs when break or continue leaves the try block.
function test_main() {
  for (const i of [1, 2, 3, 4]) {
    try {
      if (i === 2) {
        continue
      }
      if (i === 3) {
        break
      }
      log("body", i)
    } finally {
      log("finally", i)
    }
  }
  let n = 0
  while (true) {
    try {
      n += 1
      if (n === 2) {
        break
      }
    } catch (e) {
      log("never")
    } finally {
      log("while finally", n)
    }
  }
  return n
}
