// Left-associative binary operators, right-associative ternary.
function pick(n) {
  return n === 1 ? "one" : n === 2 ? "two" : n === 3 ? "three" : "many"
}

function test_main() {
  log(10 - 4 - 3, 12 / 2 / 3, 2 * 3 % 4, 17 % 5 % 3, 100 / 10 * 2)
  log(1 + 2 + "3", "1" + 2 + 3, "1" + (2 + 3), 1 + 2 + "" === "3")
  log(pick(1), pick(2), pick(3), pick(4))
  log(true ? false ? "a" : "b" : "c")
  log(null ?? null ?? "third", 0 || "" || "last", 1 && 2 && 3)
  return 2 - 1 - 1
}
