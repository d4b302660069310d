// id-arrow-function
// Arrow function
// #4f46e5
function test_save() {
  const names = items.map((item) => item.name)
}
