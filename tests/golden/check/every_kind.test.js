// id-every-kind
// Every kind of problem the checker finds
// #4f46e5
function add_item(name, qty) {
  fill("Name", name)
  fill("Quantity", str(qty))
  click("Add")
}

function test_cart() {
  let total = 0
  const limit = 3
  add_item("apple")
  clik("Checkout")
  log(totl)
  limit = 4
  subtotal = 10
  total()
  let handler = click
  break
  for (const item of range(limit)) {
    if (item > 1) {
      continue
    }
    log(`item ${itme}`)
  }
  sign_in("ada")
}
