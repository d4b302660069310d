// expect_poll(fn, matcher, {timeout, intervals, args}): fn is called (with args) until
// its value satisfies the matcher; giving up names what was wanted and the last value.
// Time is fake: now() moves only when expect_poll waits (100, 250, 500, then 1000 ms).
function count_items() {
  return now() >= 1800 ? 4 : 2
}

function todos() {
  return now() >= 1300 ? ["eggs", "buy milk"] : ["eggs"]
}

function page_text(prefix) {
  return `${prefix}: ${now() >= 1100 ? "done" : "working"}`
}

function test_main() {
  expect_poll(count_items, greater_than(3))
  expect_poll(todos, contains("buy milk"))
  expect_poll(page_text, contains("done"), { args: ["status"] })
  expect_poll(todos, has_length(2))
  expect_poll(todos, [contains("g"), truthy()])
  let started = now()
  try {
    expect_poll(count_items, less_than(3))
  } catch (e) {
    log(e.name, e.message)
  }
  log("waited", now() - started)
  try {
    expect_poll(todos, contains("bread"), { timeout: 300, intervals: [100] })
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    expect_poll(page_text, /^idle/, { timeout: 100, args: ["x"] })
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    expect_poll(page_text, "x")
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    expect_poll(count_items, 4, { args: 1 })
  } catch (e) {
    log(e.name, e.message)
  }
  expect_poll(count_items, 5, { timeout: 100, args: [1] })
}
