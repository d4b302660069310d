// No implicit globals: assigning an undeclared name is a ReferenceError at the name.
function test_main() {
  let total = 0
  total = 1
  log(total)
  try {
    undeclared = 5
  } catch (e) {
    log(e.name, e.message)
  }
  totl += 1
  return total
}
