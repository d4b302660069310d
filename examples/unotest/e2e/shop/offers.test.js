// id-shop-offers
// Offers from a mocked API, at a fixed time, on a narrow screen, with a list imported
// #0891b2
function test_offers() {
  // The browser's clock starts at a known time, and the API answers what we say.
  clock_install({time: "2026-12-24T09:30:00Z"})
  const offers = route("**/api/offers.json", {json: [{name: "Teapot", price: 20}]})
  goto("/offers.html")
  expect_text(css("#offers li"), "Teapot: 20 EUR")
  expect_equal(wait_for_response(offers).status, 200)
  expect_text(css("#clock"), "09:30 UTC")
  clock_run_for("01:00:00")
  expect_text(css("#clock"), "10:30 UTC")

  // What the page left in the browser.
  let visited = null
  for (const cookie of cookies()) {
    if (cookie.name == "visited") {
      visited = cookie.value
    }
  }
  expect_equal(visited, "offers")
  expect_not_empty(css("#clock"))

  // A narrow screen, and a list imported from the project's fixtures.
  set_viewport(400, 800)
  expect_text(css("#layout"), "compact")
  upload(label("Import a shopping list"), "unotest/fixtures/list.txt")
  expect_text(css("#imported"), /Teapot\s+Kettle/)

  // The API down: the page says so.
  unroute(offers)
  route("**/api/offers.json", "abort")
  reload()
  expect_text(role("alert"), "Offers are unavailable")
}
