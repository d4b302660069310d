function afterAll() {
  goto("/")
}
