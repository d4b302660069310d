let base = "/shop"

function open_shop() {
  goto(base)
}
