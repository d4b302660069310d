// join: "," by default; null elements become empty strings.
function test_main() {
  log([1, 2, 3].join(), [1, 2, 3].join(" - "), ["a", "b"].join(""), [].join(), ["solo"].join("+"))
  log([1, null, 3].join(), [null].join("-"), [null, null].join(), ["a", true, 2.5].join("|"))
  log("[" + [].join("x") + "]", [1e21, 0.1 + 0.2].join(" "))
  return ["Sign", "in"].join(" ")
}
