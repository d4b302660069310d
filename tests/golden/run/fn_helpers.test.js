// Functions calling functions: parameters, recursion, shared arrays, no closures.
function square(x) {
  return x * x
}

function sum_squares(list) {
  let total = 0
  for (const n of list) {
    total += square(n)
  }
  return total
}

function factorial(n) {
  if (n <= 1) {
    return 1
  }
  return n * factorial(n - 1)
}

function add_item(list, item) {
  list.push(item)
  return list.length
}

function shadow(total) {
  total = "changed locally"
  return total
}

function test_main() {
  log(square(4), sum_squares([1, 2, 3]), factorial(10))
  let cart = []
  log(add_item(cart, "apple"), add_item(cart, "pear"), cart)
  let total = 5
  log(shadow(total), total)
  return factorial(20)
}
