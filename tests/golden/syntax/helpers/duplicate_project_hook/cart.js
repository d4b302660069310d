function empty_cart() {
  click("Empty")
}

function before_each() {
  goto("/cart")
}
