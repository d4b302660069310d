// An array or object may contain itself: shown as [Circular] where it comes again,
// and json() of it is a TypeError that try catches, as JSON.stringify throws.
function test_main() {
  let self = [1]
  self.push(self)
  let o = { name: "box" }
  o.me = o
  log(self, o, len(self), self === self, self[1] === self)
  let shared = [1]
  log([shared, shared])
  try {
    json(self)
  } catch (e) {
    log(e.name, e.message)
  }
  return o
}
