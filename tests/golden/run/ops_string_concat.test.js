// + with a string on either side concatenates the other side's rendering.
function test_main() {
  log("a" + "b", "n=" + 1, 2.5 + "px", "" + 0, "x" + -1, "big " + 1e21, "tiny " + 1e-7)
  log("v: " + true, false + "!", "n: " + null, "inf " + 1 / 0, "nan " + 0 / 0)
  let s = "count"
  s += ": "
  s += 3
  log(s)
  // Spec-silent choice: arrays and objects join in with their rendering (as log shows
  // them), not JavaScript's "1,2" and "[object Object]".
  log("list " + [1, "a"], "obj " + { k: 1 })
  return 1 + 2 + "3" + 4 + 5
}
