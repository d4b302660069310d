// The hooks of every scenario under cart/: each starts on the catalog, its cart empty.

function before_each() {
  goto("/catalog.html")
  expect_count(css("#cart li"), 0)
}
