// An unknown property or method of a string, array, number, boolean or regex names the
// type and lists what it has (or says it has nothing), with a "did you mean" when close.
function test_main() {
  let list = [1, 2]
  let s = "text"
  try {
    log(s.count)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    log(s.Length)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    s.toLowercase()
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    s.length()
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    log((3).foo)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    log(false.x)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    log(/a+/g.source)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    log(/a/.test(s))
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    log({ a: 1 }.keys())
  } catch (e) {
    log(e.name, e.message)
  }
  return list.lenght
}
