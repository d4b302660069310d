// id-hook-named-like-playwright
// A hook named the way Playwright names it
// #4f46e5
function beforeEach() {
  goto("/")
}

function test_items() {
  click("Save")
}
