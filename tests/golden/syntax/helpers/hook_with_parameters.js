function before_each(page) {
  goto("/")
}
