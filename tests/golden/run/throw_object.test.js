// An uncaught {name, message} fails with that name; without a name it is ScenarioError.
// Deliberate: anything but a string or {name, message} is a TypeError at the throw.
function test_main() {
  try {
    throw { message: "no name given" }
  } catch (e) {
    log(e)
  }
  try {
    throw { name: "Custom", message: "extra keys are dropped", code: 7 }
  } catch (e) {
    log(e)
  }
  try {
    throw ["a"]
  } catch (e) {
    log(e.name, e.message)
  }
  try {
    throw 42
  } catch (e) {
    log(e.name, e.message)
  }
  throw { name: "CheckoutError", message: "cart is empty" }
}
