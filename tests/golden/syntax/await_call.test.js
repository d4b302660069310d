// id-await-call
// await before a call
// #4f46e5
function test_click() {
  await click("Log in")
}
