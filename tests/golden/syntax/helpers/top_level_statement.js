const BASE = "/shop"

function open_shop() {
  goto(BASE)
}
