// id-missing-value-after-operator
// Missing value after operator
// #4f46e5
function test_save() {
  let total = price *
}
