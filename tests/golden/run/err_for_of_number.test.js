// for...of over anything but an array or a string is a TypeError at the iterable.
function test_main() {
  try {
    for (const k of { a: 1 }) {
      log(k)
    }
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    for (const k of null) {
      log(k)
    }
  } catch (e) {
    log(e.name, e.message)
  }
  let n = 3
  for (const i of n) {
    log(i)
  }
  return "unreachable"
}
