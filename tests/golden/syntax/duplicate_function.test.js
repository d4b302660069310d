// id-duplicate-function
// Duplicate function
// #4f46e5
function open_menu() {
  click("Menu")
}

function open_menu() {
  click("Menu")
}

function test_save() {
  open_menu()
}
