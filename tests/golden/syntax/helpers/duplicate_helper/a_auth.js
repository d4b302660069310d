function sign_in(user) {
  fill("Email", user)
  click("Sign in")
}
