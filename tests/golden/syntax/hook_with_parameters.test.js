// id-hook-with-parameters
// A hook that takes a parameter
// #4f46e5
function after_each(error) {
  log(error)
}

function test_items() {
  goto("/")
}
