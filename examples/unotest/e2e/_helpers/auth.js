// Helpers are snake_case functions callable from every scenario without imports.

function sign_in(user, password) {
  goto("/signin.html")
  fill("Username", user)
  fill("Password", password)
  click(role("button", "Sign in"))
  wait_for_url(/\/account\.html$/)
}
