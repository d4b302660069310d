// expect_equal passes on strict, by-value equality (NaN equals NaN, as in every
// JavaScript assertion library) and fails with an AssertionError showing both sides.
function test_main() {
  log(expect_equal(1, 1), expect_equal("a", "a"), expect_equal([1, { k: [null] }], [1, { k: [null] }]))
  log(expect_equal({ a: 1, b: 2 }, { b: 2, a: 1 }), expect_equal(null, null))
  log(expect_equal(0 / 0, 0 / 0), expect_equal([0 / 0], [0 / 0]), expect_equal(0, -0))
  try {
    expect_equal(1, "1")
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    expect_equal([1, 2], [2, 1])
  } catch (e) {
    log(e.name, e.message)
  }
  let actual = { items: ["apple", "pear"], total: 2 }
  expect_equal(actual, { items: ["apple", "plum"], total: 2 })
  return "unreachable"
}
