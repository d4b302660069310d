// split with a string separator, an empty separator, no separator, and a limit.
function test_main() {
  let csv = "a,b,,c"
  log(csv.split(","), csv.split(",", 2), csv.split(",", 0), csv.split(",", 10))
  log(csv.split(), csv.split(";"), "abc".split(""), "abc".split("", 2))
  log("".split(","), "".split(""), ",".split(","), "a, b".split(", "))
  // The limit is read as an unsigned 32-bit number: -1 means no limit.
  log("one two three".split(" ", -1), "x-y".split("-", 1.7))
  return "2024-01-15".split("-")
}
