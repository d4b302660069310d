// A misspelt variable is a ReferenceError with a "did you mean" suggestion.
function test_main() {
  let username = "ann"
  let password = "secret"
  try {
    log(pasword)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    log(zzz)
  } catch (e) {
    log(e.name, e.message)
  }
  if (true) {
    let inner_value = 1
  }
  try {
    log(inner_value)
  } catch (e) {
    log(e.name, e.message)
  }
  return usernme
}
