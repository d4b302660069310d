// len() of strings, arrays and objects; str() renders like log (strings as they are).
function test_main() {
  log(len("abc"), len(""), len([1, [2, 3]]), len([]), len({ a: 1, b: 2 }), len({}))
  log(str(1), str(1.50), str(0.1 + 0.2), str(null), str(true), str("x"), str([1, "a"]), str({ k: "v" }), str(/re/g))
  log(str(42) === "42", str(str(1)), len(str(12345)))
  return len(5)
}
