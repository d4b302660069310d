// replace with a regex: first match, or all with /g; $1 $<name> $& $$ $` $'.
function test_main() {
  log("aaa".replace(/a/, "b"), "aaa".replace(/a/g, "b"), "aXbxc".replace(/x/gi, "_"))
  log("John Smith".replace(/(\w+)\s(\w+)/, "$2, $1"), "abc".replace(/(b)/, "[$1|$2|$0|$&]"))
  log("2024-01-15".replace(/(?<y>\d+)-(?<m>\d+)-(?<d>\d+)/, "$<d>/$<m>/$<y>"))
  log("cost: 5".replace(/\d/, "$$$&"), "abc".replace(/b/, "$`$'"), "a-b".replace(/(x)?-/, "[$1]"))
  // After an empty match the search moves on by one character, as in JavaScript.
  log("abc".replace(/x*/g, "-"), "aaa".replace(/a*?/g, "-"), "abc".replace(/(?:)/g, "."))
  log("a1b22".replace(/\d+/g, "#"), "one two".replace(/^/gm, "> "), json("l1\nl2".replace(/^/gm, "> ")))
  return "  trim me  ".replace(/^\s+|\s+$/g, "")
}
