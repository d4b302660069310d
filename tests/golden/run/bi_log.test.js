// log(...values) prints one line: values separated by spaces, strings as they are.
function test_main() {
  log()
  log("one")
  log("a", 1, null, true, [1, "s"], { k: "v" }, "x y")
  log("")
  log("", "after an empty string")
  log("multi", "part", "message:", 3, "items")
  return log("log returns null")
}
