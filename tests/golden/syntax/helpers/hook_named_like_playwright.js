function after_all() {
  goto("/")
}
