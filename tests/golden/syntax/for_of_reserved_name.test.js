// id-for-of-reserved-name
// For of reserved name
// #4f46e5
function test_save() {
  for (const of of [1]) { log(of) }
}
