// id-clean
// A file without problems
// #4f46e5
function add_item(name) {
  fill("Name", name)
  click("Add")
}

function test_cart() {
  let total = 0
  for (const item of range(3)) {
    add_item(`item ${item}`)
    total += 1
  }
  while (total > 0) {
    total -= 1
    if (total === 1) {
      break
    }
  }
  try {
    sign_in("ada", "secret")
  } catch (e) {
    log(e.message)
  }
}
