// regex(source, flags?) is new RegExp(source, flags): the literal's translation, flags
// and error words; its source renders as JavaScript's RegExp.prototype.source does.
function test_main() {
  let word = "o+"
  let r = regex(word, "g")
  log(r, matches("foo", r), matches("f", r), "fooboo".replace(r, "0"))
  log(regex("^a.c$", "i"), matches("AbC", regex("^a.c$", "i")), matches("abc\nx", regex("^x", "m")))
  log(regex("a/b"), regex("[/]"), regex(""), regex("a\\/b"), regex("a\nb"))
  log(regex("a/b") == /a\/b/, regex("\\d+") == /\d+/, regex("x", "g") == /x/)
  log(matches("1/2", regex("1/2")), "a.b.c".split(regex("\\.")))
  for (const args of [["a", "x"], ["a", "gg"], ["(a", ""], ["\\u{41}", ""], ["a{2,1}", "i"]]) {
    try {
      regex(args[0], args[1])
    } catch (e) {
      log(e.name, e.message)
    }
  }
  try {
    regex(1)
  } catch (e) {
    log(e.name, e.message)
  }
  return regex("a", null)
}
