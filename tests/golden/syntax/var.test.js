// id-var
// Var
// #4f46e5
function test_save() {
  var count = 1
}
