function open_shop() {
  goto("/shop")
}

const open_shop = "/shop"
