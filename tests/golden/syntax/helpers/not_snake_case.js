function openMenu() {
  click("Menu")
}
