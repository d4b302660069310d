// expect_to_pass(fn, {timeout, intervals, args}): fn is called until a call completes
// without an error; giving up, the last error is the failure, its name kept and where
// it happened said. Time is fake: now() moves only between calls.
function saved() {
  log("try at", now())
  expect_equal(now() >= 1300, true)
}

function never() {
  expect_equal(len([1, 2]), greater_than(2))
}

function thrower(what) {
  throw { name: "NotReady", message: what }
}

function test_main() {
  expect_to_pass(saved)
  expect_to_pass(now)
  let started = now()
  try {
    expect_to_pass(never, { timeout: 1000 })
  } catch (e) {
    log(e.name, e.message)
  }
  log("waited", now() - started)
  try {
    expect_to_pass(thrower, { timeout: 200, intervals: [50], args: ["the page"] })
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    expect_to_pass(num, { timeout: 100, args: ["x"] })
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    expect_to_pass(thrower)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    expect_to_pass("saved")
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    expect_to_pass(saved, { timout: 5 })
  } catch (e) {
    log(e.name, e.message)
  }
  expect_to_pass(never, { timeout: 2000, intervals: [1000] })
}
