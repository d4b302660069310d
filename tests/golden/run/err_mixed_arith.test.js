// No silent coercion: mixed-type arithmetic is a TypeError at the operator.
function test_main() {
  try {
    let x = "5" - 1
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    let x = true + 1
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    let x = null * 2
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    let x = [1] + [2]
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    let x = -"3"
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    let x = +true
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    let n = 1
    n += "x"
    log("string += works:", n)
    n -= "1"
  } catch (e) {
    log(e.name, e.message)
  }
  let price = 10
  let qty = "3"
  return price * qty
}
