// Only objects and arrays (by index) take assignments; the message says "a" or "an".
function test_main() {
  let a = [1]
  let s = "abc"
  let r = /a/
  try {
    a.length = 0
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    s.length = 0
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    r.lastIndex = 0
  } catch (e) {
    log(e.name, e.message)
  }
  log(a, s)
  a["x"] = 1
}
