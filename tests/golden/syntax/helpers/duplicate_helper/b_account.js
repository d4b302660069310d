// Account helpers

function open_account() {
  click("Account")
}

function sign_in(user, password) {
  fill("Email", user)
  fill("Password", password)
}
