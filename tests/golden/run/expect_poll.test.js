// expect_poll(fn, expected, options?) calls fn until its value equals expected (or
// matches a regex), waiting 100, 250, 500, then 1000 ms between calls; time here is
// fake (now() moves only when expect_poll waits).
function ready() {
  log("ready? at", now())
  return now() >= 1800
}

function status() {
  return now() >= 1300 ? "Done: 3 items" : "Working"
}

function never() {
  return { n: 1 }
}

function needs_arg(x) {
  return x
}

function broken() {
  return missing_variable
}

function test_main() {
  expect_poll(ready, true)
  expect_poll(status, /^Done: \d+/)
  expect_poll(never, { n: 1 }, { timeout: 0 })
  let poll = never
  expect_poll(poll, { n: 1 }, { intervals: [5] })
  let started = now()
  try {
    expect_poll(never, { n: 2 }, { timeout: 1000 })
  } catch (e) {
    log(e.name, e.message)
  }
  log("waited", now() - started)
  try {
    expect_poll(never, 1, { timeout: 300, intervals: [50] })
  } catch (e) {
    log(e.name, e.message)
  }
  for (const bad of [needs_arg, "ready", null]) {
    try {
      expect_poll(bad, 1)
    } catch (e) {
      log(e.name, e.message)
    }
  }
  for (const options of [{ timeout: -1 }, { intervals: [] }, { interval: 5 }, 5, { intervals: [1, "2"] }]) {
    try {
      expect_poll(ready, true, options)
    } catch (e) {
      log(e.name, e.message)
    }
  }
  expect_poll(broken, 1)
}
