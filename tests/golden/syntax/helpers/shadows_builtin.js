function open_menu() {
  click("Menu")
}

function click(target) {
  log(target)
}
