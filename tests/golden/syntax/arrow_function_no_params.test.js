// id-arrow-function-no-params
// Arrow function without parameters
// #4f46e5
function test_save() {
  let later = () => click("Save")
}
