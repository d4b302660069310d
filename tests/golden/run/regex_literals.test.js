// Regex literals (flags g i m) with matches / replace / split; a / b is still division.
function test_main() {
  let r = /(\d+)-(\d+)/g
  log(r, /a\/b/, /[/]/i, /^x$/m)
  log(matches("hello world", /wor/), matches("hello", /^ello/), matches("HELLO", /hello/i))
  log(matches("order 10-20", r), matches("no digits", r), matches("ABC", /b/i), matches("ABC", /b/))
  log(matches("first\nsecond", /^second$/m), matches("first\nsecond", /^second$/))
  log(matches("", /^$/), matches("abc", /(?:)/), matches("2024-01-15", /^\d{4}-\d{2}-\d{2}$/), matches("Total: $5", /\$\d/))
  log("1-2 and 3-4".replace(r, "$2-$1"), "a.b.c".split(/\./), "x/y".split(/\//))
  let a = 10
  let b = 2
  let g = 5
  log(a / b / g, a / b, (a + b) / 4, a /b/ g)
  log(matches("user_42@example.com", /^[\w.]+@[\w.]+\.[a-z]{2,}$/))
  return matches("abc", "b")
}
