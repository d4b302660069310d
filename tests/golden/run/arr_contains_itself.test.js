// An array or object may contain itself: shown as [Circular] where it comes again,
// and json() of it is a TypeError that try catches, as JSON.stringify throws. Two that
// contain themselves compare by value as Node's deep equality does.
function test_main() {
  let self = [1]
  self.push(self)
  let o = { name: "box" }
  o.me = o
  log(self, o, len(self), self === self, self[1] === self)
  let shared = [1]
  log([shared, shared])
  let twin = [1]
  twin.push(twin)
  let other = [2]
  other.push(other)
  let o2 = { name: "box" }
  o2.me = o2
  log(self == twin, self === other, o == o2, [self] == [twin])
  try {
    json(self)
  } catch (e) {
    log(e.name, e.message)
  }
  return o
}
