// id-evaluate-arrow
// An arrow function given to evaluate
// #4f46e5
function test_read() {
  goto("/")
  let user = evaluate(() => localStorage.getItem("user"))
}
