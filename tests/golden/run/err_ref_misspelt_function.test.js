// A misspelt function (local, helper or built-in) is a ReferenceError with a suggestion.
function compute_total(items) {
  return len(items)
}

function test_main() {
  try {
    lgo("typo")
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    completely_unknown()
  } catch (e) {
    log(e.name, e.message)
  }
  let total = 1
  try {
    total()
  } catch (e) {
    log(e.name, e.message)
  }
  return compute_totl([1, 2])
}
