// id-cart-one-item
// One item in the cart costs its price @cart
// #d97706
const CASES = [
  { name: "teapot", item: "Teapot", price: 25 },
  { name: "kettle", item: "Kettle", price: 40 },
]

function test_one_item(c) {
  step(`Add the ${c.item}`, add, { args: [c.item] })
  expect_poll(cart_items, contains(c.item))
  expect_text(testid("total"), `Total: ${c.price} EUR`, { soft: true })
  expect_equal(cart_items(), [c.item], { soft: true })
}

function add(item) {
  click(role("button", `Add ${item}`))
}

function cart_items() {
  return evaluate("[...document.querySelectorAll('#cart li')].map((li) => li.textContent)")
}
