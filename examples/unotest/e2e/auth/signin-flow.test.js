// id-auth-signin-flow
// A registered user signs in and sees their name
// #059669
function test_signin_flow() {
  const user = env("DEMO_USER", "ada")
  sign_in(user, env("DEMO_PASSWORD", "lovelace"))
  expect_text(testid("greeting"), `Hello, ${user}!`)
  click("Sign out")
  expect_visible(role("button", "Sign in"))
}
