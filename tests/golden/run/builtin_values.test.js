// A built-in's name is a function value where a function is passed: expect_poll's and
// expect_to_pass's first argument, any argument of a function of the file or a helper.
// Anywhere else it is a TypeError (call it instead).
function describe(fn) {
  return `${fn} is a ${type_of(fn)}`
}

function same(a, b) {
  return a == b
}

function wait_past(clock, ms) {
  expect_poll(clock, greater_than(ms))
  return clock
}

function test_main() {
  log(describe(now), describe(describe), same(now, now), same(now, unique), same(now, describe))
  let clock = wait_past(now, 1300)
  log(clock, now())
  expect_poll(now, greater_or_equal(1000))
  expect_poll(range, [0, 1], { args: [2] })
  expect_poll(unique, contains("t-"), { args: [] })
  try {
    expect_poll(range, [0])
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    expect_poll(now, 1, { args: [1, 2] })
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    expect_poll(num, 1, { args: ["x"] })
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    expect_poll(log, 1, { args: [1], timeout: 100 })
  } catch (e) {
    log(e.name, e.message)
  }
  let f = now
}
