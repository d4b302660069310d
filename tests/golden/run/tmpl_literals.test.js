// Template literals: interpolation of any expression, nested templates, escapes.
function test_main() {
  let name = "Ann"
  let items = ["a", "b"]
  log(`Hello ${name}!`, `${1 + 1} = two`, `${name.toUpperCase()}${"-"}${items.length}`)
  log(`outer ${`middle ${`inner ${name}`}`} end`, `${items.length > 1 ? `${items.length} items` : "one item"}`)
  log(`${null} ${true} ${2.50} ${0.1 + 0.2} ${1e21} ${{ k: 1 }.k}`)
  log(`esc: \` \${not} \u0041 \x42 $ {} $`, `${"}"}`, `${`}`}`, ``.length)
  log(`line one
line two`.split("\n"))
  return `${name}'s total: ${[1, 2, 3].slice(1).join("+")}`
}
