// json_parse(text) is JSON.parse: JSON's values as scenario values, every number a
// float; what is not JSON is a SyntaxError naming the position.
function test_main() {
  let data = json_parse('{"items": ["a", "b"], "n": 3, "ok": true, "none": null, "x": {"y": 1.5e2}}')
  log(data, data.items[1], data.n + 1, data.x.y)
  log(json_parse("42"), json_parse(' "s" '), json_parse("[]"), json_parse("-0"), json_parse("1e400"))
  log(json_parse(json({ a: [1, "two"] })), json_parse('{"a": 1, "a": 2}'))
  data.items.push("c")
  log(data.items)
  for (const text of ["{", "[1,]", "NaN", "{'a': 1}", "", "[1] x", "Infinity"]) {
    try {
      json_parse(text)
    } catch (e) {
      log(e.name, e.message)
    }
  }
  json_parse(3)
}
