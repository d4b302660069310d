// id-duplicate-parameter
// Duplicate parameter
// #4f46e5
function fill_form(name, email, name) {
  fill("Name", name)
}

function test_save() {
  fill_form("a", "b", "c")
}
