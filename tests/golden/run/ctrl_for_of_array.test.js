// for (const x of array) and for (let x of array): fresh binding per iteration.
function test_main() {
  let sum = 0
  for (const n of [1, 2, 3, 4]) {
    sum += n
  }
  log(sum)
  for (let x of ["a", "b"]) {
    x = x + x
    log(x)
  }
  for (const x of []) {
    log("never")
  }
  let pairs = []
  for (const i of [1, 2]) {
    for (const j of ["x", "y"]) {
      pairs.push(`${i}${j}`)
    }
  }
  log(pairs)
  // The array is read live, as in JavaScript: elements pushed by the body are visited.
  let queue = [1]
  for (const n of queue) {
    if (n < 4) {
      queue.push(n * 2)
    }
    log("visit", n)
  }
  for (const row of [[1, 2], { k: "v" }, null]) {
    log(row)
  }
  return queue
}
