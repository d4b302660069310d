// env(name) is the variable's string, the default when unset, or null.
function test_main() {
  log(env("BASE_URL"), env("BASE_URL", "ignored"))
  log(env("NOT_SET"), env("NOT_SET", "fallback"), env("NOT_SET", 3), env("NOT_SET") ?? "via ??")
  log("[" + env("EMPTY_VAR") + "]", "[" + env("EMPTY_VAR", "default") + "]")
  return env(42)
}
