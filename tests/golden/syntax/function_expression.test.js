// id-function-expression
// Function expression
// #4f46e5
function test_save() {
  let save = function () { click("Save") }
}
