// id-two-values-without-an-operator
// two_values_without_an_operator
// #4f46e5
function test_main() {
  total = price "EUR"
}
