// id-async-arrow
// Async arrow function
// #4f46e5
function test_save() {
  let save = async () => click("Save")
}
