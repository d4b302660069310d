// id-let-shadows-parameter
// Let shadows parameter
// #4f46e5
function fill_form(name) {
  let name = "x"
}

function test_save() {
  fill_form("a")
}
