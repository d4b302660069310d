// A function of the file or of a helper named without () is a value: it renders as
// <function name>, == is identity, and it travels in variables and arguments.
function greet() {
  return "hi"
}

function other() {
  return "hi"
}

function describe(fn) {
  return `${fn} is a ${type_of(fn)}`
}

function type_of(value) {
  return str(value)
}

function test_main() {
  let f = greet
  log(f, str(greet), `${other}`, [greet, 1], { fn: greet })
  log(f == greet, greet === greet, greet == other, f != other, greet == "greet")
  log(json(greet), json([other]))
  log(describe(greet))
  log(helper_fn, helper_fn == helper_fn)
  try {
    f()
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    log(f.name)
  } catch (e) {
    log(e.name, e.message)
  }
  let g = log
  return g
}
