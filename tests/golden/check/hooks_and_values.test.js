// id-hooks-and-values
// Hooks, function values, helper consts and expect_poll, as the checker sees them
// #4f46e5
function before_each() {
  log(TODO_ITEMS)
}

function after_each() {
  TODO_ITEMS = []
}

function count_of(list) {
  return list
}

function item_count() {
  return 3
}

function test_values() {
  let poll = item_count
  expect_poll(item_count, 3)
  expect_poll(poll, 3, { timeout: 1000 })
  expect_poll(item_count(), 3)
  expect_poll(count_of, 3)
  before_each()
  log(after_each)
  let printer = log
  log(TODO_ITEM)
  let TODO_ITEMS = []
  TODO_ITEMS = [1]
}
