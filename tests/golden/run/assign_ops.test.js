// += -= *= /= %= on variables, strings and numbers.
function test_main() {
  let x = 10
  x += 5
  log(x)
  x -= 3
  log(x)
  x *= 2
  log(x)
  x /= 5
  log(x)
  x %= 3
  log(x)
  let s = "a"
  s += "b"
  s += 1
  s += null
  log(s)
  let n = 7
  n %= -4
  log(n)
  n /= 0
  log(n)
  let m = -7
  m %= 4
  return m
}
