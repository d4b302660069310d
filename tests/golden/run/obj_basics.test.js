// Object literals: shorthand, quoted and numeric keys; missing keys read as null
// (the language has no undefined), but reading a property of null is a TypeError.
function test_main() {
  let exact = true
  let o = { name: "Save", "data-id": 3, exact }
  log(o, o.name, o["data-id"], o.exact)
  // Numeric keys are strings, as in JavaScript (1.50 is the key "1.5").
  let n = { 42: "answer", 1.50: "one and a half" }
  log(n[42], n["42"], n[1.5], n["1.5"], n[1.50])
  log(o.missing, o["missing"], o.missing ?? "default", len(o))
  let key = "name"
  log(o[key], o["na" + "me"])
  let nested = { a: { b: { c: "deep" } } }
  log(nested.a.b.c, nested["a"]["b"]["c"], nested.a.x)
  log(nested.a)
  let user = { profile: null }
  try {
    log(user.profile[0])
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    user.profile.name = "x"
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    log(user[null])
  } catch (e) {
    log(e.name, e.message)
  }
  return user.settings.theme
}
