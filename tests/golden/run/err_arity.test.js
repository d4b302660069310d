// Functions, built-ins and methods check their argument count: a TypeError at the
// callee (deliberate for functions: JavaScript would pass undefined or drop extras).
function add(a, b) {
  return a + b
}

function none() {
  return "none"
}

function test_main() {
  log(add(1, 2), none())
  try {
    add(1, 2, 3)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    none("x")
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    len()
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    now(1)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    env("A", "b", "c")
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    expect_equal(1)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    let s = "abc".slice(1, 2, 3)
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    let i = [1].indexOf()
  } catch (e) {
    log(e.name, e.message)
  }
  return add(1)
}
