// if / else if / else, with JavaScript truthiness in the condition.
function grade(score) {
  if (score >= 90) {
    return "A"
  } else if (score >= 75) {
    return "B"
  } else if (score >= 50) {
    return "C"
  } else {
    return "F"
  }
}

function test_main() {
  log(grade(95), grade(90), grade(80), grade(50), grade(10))
  for (const v of [0, 1, "", "0", null, [], {}, false, true]) {
    if (v) {
      log("truthy", json(v))
    } else {
      log("falsy", json(v))
    }
  }
  if (false) {
    log("never")
  }
  if (1) {
    log("no else")
  }
  return grade(74.5)
}
