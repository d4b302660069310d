// < <= > >= on two numbers or two strings (code-unit order); any other pair is a
// TypeError at the operator (deliberate: no coercion, so 1 < 2 < 3 is an error).
function test_main() {
  log(1 < 2, 2 <= 2, 3 > 4, 4 >= 4, -1 < 0, 1 / 0 > 1e308)
  log("a" < "b", "B" < "a", "abc" < "abd", "ab" < "abc", "10" < "9", "" < "a", "Z" >= "Z", "apple" > "Apple")
  try {
    log(1 < 2 < 3)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    log(null >= 0)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    log([1] < [2])
  } catch (e) {
    log(e.name, e.message)
  }
  let count = 5
  if (count > "3") {
    log("never")
  }
  return count
}
