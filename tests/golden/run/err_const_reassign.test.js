// Assigning a const is a TypeError at the name; its contents stay mutable.
function test_main() {
  const items = [1]
  items[0] = 2
  items.push(3)
  log(items)
  const limit = 10
  try {
    limit += 1
  } catch (e) {
    log(e.name, e.message)
  }
  for (const x of [1]) {
    try {
      x = 2
    } catch (e) {
      log(e.name, e.message)
    }
  }
  log(limit)
  limit = 11
  return limit
}
