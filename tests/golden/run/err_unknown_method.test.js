// An unknown method or property is a TypeError naming the value's type, at the name.
function test_main() {
  let s = "text"
  let n = 3.14159
  let o = { keys: [1] }
  let nothing = null
  try {
    log(s.foo)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    log(s.slice)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    s.charAt(0)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    n.toFixed(2)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    o.keys()
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    nothing.trim()
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    log(true.x)
  } catch (e) {
    log(e.name, e.message)
  }
  // Arguments are checked, not coerced.
  try {
    s.includes(1)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    let j = [1].join(1)
  } catch (e) {
    log(e.name, e.message)
  }
  let list = [3, 1, 2]
  list.sort()
  return list
}
