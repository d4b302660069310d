// Matchers: values that test (Playwright's toContain, toBeGreaterThan, ...). They are
// the expected value of expect_equal, expect_not_equal and expect_poll, also inside an
// expected array or object; anywhere else they say what they are for.
function check(actual, expected) {
  try {
    expect_equal(actual, expected)
    log("ok  ", expected)
  } catch (e) {
    log(e.name, e.message)
  }
}

function check_not(actual, expected) {
  try {
    expect_not_equal(actual, expected)
    log("ok not", expected)
  } catch (e) {
    log(e.name, e.message)
  }
}

function test_main() {
  check("buy milk", contains("milk"))
  check(["eggs", { title: "milk" }], contains({ title: "milk" }))
  check(["eggs"], contains("milk"))
  check(null, contains("milk"))
  check("milk", contains(1))
  check(3, greater_than(2))
  check(2, greater_than(2))
  check(2, greater_or_equal(2))
  check(1, less_than(2))
  check(2, less_or_equal(1))
  check("3", greater_than(2))
  check(0.1 + 0.2, close_to(0.3))
  check(0.1 + 0.2, close_to(0.3, 15))
  check(0.1 + 0.2, close_to(0.3, 17))
  check(1 / 0, close_to(1 / 0))
  check(1004, close_to(1000, -1))
  check(1, truthy())
  check("", truthy())
  check(0 / 0, falsy())
  check([], falsy())
  check("héé", has_length(3))
  check([1, 2], has_length(3))
  check({ length: 3 }, has_length(3))
  check({ a: 1, b: 2, c: 3 }, has_length(3))
  check({ a: 1, b: { c: 2, d: 3 }, e: [{ f: 1, g: 2 }] }, matches_object({ b: { c: 2 }, e: [{ f: 1 }] }))
  check({ a: 1, e: [{ f: 1 }, { f: 2 }] }, matches_object({ e: [{ f: 1 }] }))
  check({ a: null }, matches_object({ a: null }))
  check({}, matches_object({ a: null }))
  check([{ id: 1, x: 2 }], matches_object([{ id: 1 }]))
  check({ n: 3, items: [1, 5] }, { n: greater_than(2), items: [1, less_than(4)] })
  check(0 / 0, 0 / 0)
  check_not(3, 4)
  check_not(3, 3)
  check_not([1, 2], contains(3))
  check_not([1, 2], contains(2))
  log(contains("x"), [greater_than(2)], { m: close_to(1, 3) }, truthy(), matches_object({ a: [1] }))
  log(`${has_length(2)}`, json(falsy()), str(less_than(0)))
  log(type_of(contains("x")))
  try { greater_than("2") } catch (e) { log(e.name, e.message) }
  try { close_to(1, 0.5) } catch (e) { log(e.name, e.message) }
  try { has_length(-1) } catch (e) { log(e.name, e.message) }
  try { matches_object(3) } catch (e) { log(e.name, e.message) }
  try { expect_equal(contains("x"), "x") } catch (e) { log(e.name, e.message) }
  try { assert(greater_than(2)) } catch (e) { log(e.name, e.message) }
  try { log(len(contains("x"))) } catch (e) { log(e.name, e.message) }
  try { log(contains("x").length) } catch (e) { log(e.name, e.message) }
  try { log(contains("x") === contains("x")) } catch (e) { log(e.name, e.message) }
  let wanted = greater_than(2)
  if (3 == wanted) {
    log("never here")
  }
}
