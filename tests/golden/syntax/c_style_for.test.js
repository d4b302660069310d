// id-c-style-for
// C style for
// #4f46e5
function test_save() {
  for (let i = 0; i < 3; i += 1) {
    click("Next")
  }
}
