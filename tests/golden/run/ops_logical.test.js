// && || ?? return one of their operands, not a boolean.
function test_main() {
  log(1 && 2, 0 && 2, "" && "x", null && 1, "a" && null)
  log(1 || 2, 0 || 2, "" || "default", null || false, false || 0)
  log(null ?? "d", 0 ?? "d", "" ?? "d", false ?? "d", [] ?? "d")
  let config = { retries: 0, name: "" }
  log(config.retries ?? 3, config.retries || 3, config.timeout ?? 30, config.name || "anon")
  return [0 && 1, 0 || null, null ?? null]
}
