// Equality is always strict (== is ===); arrays and objects compare by value.
function test_main() {
  log(1 == "1", 1 === 1, "a" == "a", 0 == false, null == false, "" == 0)
  log(1 != "1", 1 !== 1, null === null, null == 0, true === true, 0 === -0)
  log([1, 2] == [1, 2], [1, 2] === [2, 1], [] === [], [[1]] === [[1]], [1] === [1, 1])
  log({ a: 1, b: [2] } === { b: [2], a: 1 }, {} === {}, { a: 1 } === { a: 1, b: null })
  log({ a: null } === {}, [null] === [], [1] === 1, "1,2" === [1, 2])
  log(/ab/g === /ab/g, /ab/ === /ab/i)
  let a = [1]
  let b = a
  b.push(2)
  return a === [1, 2]
}
