function helper_fn() {
  return 1
}
