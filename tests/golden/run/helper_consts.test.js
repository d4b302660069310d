// Top-level consts of helper files: literals, frozen, seen by every scenario and helper.
function test_main() {
  log(TODO_ITEMS.length, first_item(), CONFIG.limits.max, CONFIG.neg, empty_note)
  log(CONFIG, matches("12 €", CONFIG.price))
  let copy = TODO_ITEMS.slice()
  copy.push("walk")
  log(copy.length, TODO_ITEMS.length, copy == TODO_ITEMS, TODO_ITEMS.slice() == TODO_ITEMS)
  for (const item of TODO_ITEMS) {
    log(item)
  }
  try {
    TODO_ITEMS.push("x")
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    CONFIG.user = "bob"
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    CONFIG.limits.max += 1
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    let tags = CONFIG.tags
    tags[0] = "z"
  } catch (e) {
    log(e.name, e.message)
  }
  let TODO_ITEMS = "shadowed"
  log(TODO_ITEMS, CONFIG.user, CONFIG.limits.max)
  CONFIG = {}
}
