// includes / startsWith / endsWith / indexOf with their optional position argument,
// clamped to 0..length as in JavaScript.
function test_main() {
  let s = "unotest runner"
  log(s.includes("test"), s.includes("Test"), s.includes(""), s.includes("u", 1), s.includes("r", -5))
  log(s.startsWith("uno"), s.startsWith("test"), s.startsWith("test", 3), s.startsWith("", 99))
  log(s.endsWith("runner"), s.endsWith("test"), s.endsWith("test", 7), s.endsWith("", -1))
  let b = "banana"
  log(b.indexOf("a"), b.indexOf("an"), b.indexOf("a", 2), b.indexOf("a", 6), b.indexOf("x"))
  log(b.indexOf("a", -3), b.indexOf(""), b.indexOf("", 3), b.indexOf("", 99), b.indexOf("na", 2.9))
  return ["".includes(""), "".indexOf("a")]
}
