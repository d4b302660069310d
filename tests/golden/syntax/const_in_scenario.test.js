// id-const-in-scenario
// A top-level const in a scenario
// #4f46e5
const ITEMS = ["a", "b"]

function test_items() {
  log(ITEMS)
}
