// id-smoke-welcome
// Welcome page greets a new visitor @smoke
// #4f46e5
function test_welcome() {
  goto("/")
  expect_title("Unoshop")
  expect_visible(role("heading", "Welcome to Unoshop"))
  const links = ["Catalog", "Sign in"]
  for (const name of links) {
    expect_visible(role("link", name))
  }
  log(`checked ${len(links)} links on ${url()}`)
}
