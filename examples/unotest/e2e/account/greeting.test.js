// id-account-greeting
// A saved session greets its user without signing in again @smoke
// #0891b2
function test_greeting() {
  expect_text(testid("greeting"), `Hello, ${env("DEMO_USER", "ada")}!`)
  expect_visible(role("button", "Sign out"))
}
