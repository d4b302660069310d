// id-shop-add-to-cart
// Items added from the catalog show up in the cart with the right total @cart
// #d97706
function test_add_to_cart() {
  goto("/catalog.html")
  const items = ["Teapot", "Kettle"]
  let expected = 0
  for (const item of items) {
    click(role("button", `Add ${item}`))
    expected += price_of(item)
  }
  expect_count(css("#cart li"), len(items))
  expect_text(testid("total"), `Total: ${expected} EUR`)
  if (is_visible("Clear cart")) {
    click("Clear cart")
    expect_count(css("#cart li"), 0)
  }
}

function price_of(item) {
  const prices = { Teapot: 25, Kettle: 40 }
  return prices[item]
}
