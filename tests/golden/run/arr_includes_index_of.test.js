// includes / indexOf compare by value; includes finds NaN, indexOf does not.
function test_main() {
  let a = [1, "1", null, [2], { k: 1 }, false]
  log(a.includes(1), a.includes("1"), a.includes(null), a.includes([2]), a.includes({ k: 1 }))
  log(a.includes(0), a.includes(true), a.includes("2"), [].includes(null))
  log(a.indexOf("1"), a.indexOf([2]), a.indexOf({ k: 1 }), a.indexOf(false), a.indexOf(7))
  let nan = 0 / 0
  log([nan].includes(nan), [nan].indexOf(nan), [0].includes(-0), [-0].indexOf(0))
  // The optional start position: negative counts from the end.
  let b = ["x", "y", "x", "y"]
  log(b.indexOf("x", 1), b.indexOf("x", -1), b.indexOf("y", -1), b.indexOf("x", 9), b.indexOf("x", -9))
  log(b.includes("x", 3), b.includes("y", 3), b.includes("x", -2))
  return [1, 2, 3].indexOf(3)
}
