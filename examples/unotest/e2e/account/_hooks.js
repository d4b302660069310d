// The hooks of every scenario under account/. They start signed in from the session
// auth/save-session saves: run them with `unotest collection signed-in`.

function before_each() {
  goto("/account.html")
}
