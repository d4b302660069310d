// num() reads numbers like JavaScript's Number(), but an unreadable value is a
// TypeError at the call (deliberate: no NaN; "" and "  " are errors, not 0).
function test_main() {
  log(num("42"), num(" 3.5 "), num("-1e3"), num("+.5"), num("5."), num("0x1F"), num("0b101"), num("0o17"))
  log(num("Infinity"), num("-Infinity"), num("1e400"), num(7), num(true), num(false), num("-0"))
  for (const bad of ["abc", "12px", "", "  ", "1_000", "NaN", "infinity", "-0x1F", "1e", "٣"]) {
    try {
      num(bad)
    } catch (e) {
      log(e.name, e.message)
    }
  }
  try {
    num([1])
  } catch (e) {
    log(e.name, e.message)
  }
  log(num("12") + num("0.5"))
  let qty = "three"
  return 2 * num(qty)
}
