// length, indexing, toLowerCase, toUpperCase, trim.
function test_main() {
  let s = "Hello, World"
  log(s.length, "".length, s[0], s[7], s[s.length - 1], s[-1], s[99], s[1.5])
  log(s.toLowerCase(), s.toUpperCase(), "straße".toUpperCase(), "ÀÉÎ".toLowerCase())
  log("[" + "  \t padded \n ".trim() + "]", "[" + "   ".trim() + "]", "[" + "x".trim() + "]")
  return s.toUpperCase().toLowerCase().length
}
