// json() is JSON.stringify: compact, NaN and Infinity become null, regexes {}.
function test_main() {
  log(json({ a: [1, 2.5, null, true, "x\"y"], b: {}, "c d": [] }))
  log(json("text"), json(null), json(false), json(1.0), json(-0), json(1e21), json(0.1 + 0.2))
  log(json(0 / 0), json([1 / 0, -1 / 0]), json(/x/g), json("é\n\t"))
  return json([{ k: "v" }, [[]]])
}
