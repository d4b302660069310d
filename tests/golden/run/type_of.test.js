// type_of(x) is JavaScript's typeof; there is no undefined (a missing key is null, and
// typeof null is "object"), functions (of the file, helpers, built-ins) are "function".
function show(value) {
  return type_of(value)
}

function test_main() {
  log(type_of(1), type_of(0 / 0), type_of("s"), type_of(""), type_of(true))
  log(type_of(null), type_of([]), type_of({}), type_of(/x/), type_of({ a: 1 }.b))
  log(type_of(show), show(show), show(now), show(greater_than(1)))
  return type_of(type_of)
}
