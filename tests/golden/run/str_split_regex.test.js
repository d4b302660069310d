// split with a regex: capture groups are spliced in, empty matches split characters.
function test_main() {
  log("a1b22c333".split(/\d+/), "a, b ,c".split(/\s*,\s*/), "one  two".split(/ /))
  log("a1b2".split(/(\d)/), "2024-01/15".split(/([-\/])/), "abc".split(/(?:)/))
  log("abc".split(/b*/), "ab".split(/a/), "x".split(/x/), "".split(/x/), "".split(/(?:)/))
  log("A-b-C".split(/-/, 2), "a1b2c3".split(/(\d)/, 3), "Hello".split(/L/i))
  return "line1\nline2\r\nline3".split(/\r?\n/)
}
