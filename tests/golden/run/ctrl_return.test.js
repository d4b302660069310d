// return with and without a value, from inside loops; a missing return gives null.
function first_even(list) {
  for (const n of list) {
    while (true) {
      if (n % 2 === 0) {
        return n
      }
      break
    }
  }
  return
}

function no_return() {
  let x = 1
}

function test_main() {
  log(first_even([1, 3, 6, 8]), first_even([1]), no_return())
  return first_even([7, 10])
}
