// id-statement-outside-function
// Statement outside function
// #4f46e5
goto("/")

function test_save() {
  click("Save")
}
