// slice(start, end): negative indices count from the end; fractions truncate.
function test_main() {
  let s = "0123456789"
  log(s.slice(3), s.slice(3, 6), s.slice(-3), s.slice(-4, -1), s.slice(2, -2))
  log(s.slice(), s.slice(0), s.slice(6, 3), s.slice(-100), s.slice(100), s.slice(1.9, 3.1))
  log("[" + s.slice(5, 5) + "]", "[" + "".slice(1) + "]", s.slice(-3, 9), s.slice(-0))
  return "Hello".slice(-4, -2)
}
