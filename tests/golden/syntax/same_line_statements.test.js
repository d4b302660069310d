// id-same-line-statements
// Same line statements
// #4f46e5
function test_save() {
  let total = price count
}
