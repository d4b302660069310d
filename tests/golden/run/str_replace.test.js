// replace with a string pattern: only the first occurrence; $ patterns in the replacement.
function test_main() {
  log("aaa".replace("a", "b"), "abc".replace("x", "y"), "x".replace("", "-"))
  log("price".replace("price", "$$5"), "abc".replace("b", "[$&]"), "abc".replace("b", "<$`|$'>"))
  log("abc".replace("b", "$1"), "a.b.c".replace(".", "!"), "$".replace("$", "$$$$"))
  return "Hello World".replace("World", "unotest")
}
