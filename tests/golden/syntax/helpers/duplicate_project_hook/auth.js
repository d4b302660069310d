function before_each() {
  goto("/login")
}

function after_each() {
  goto("/logout")
}
