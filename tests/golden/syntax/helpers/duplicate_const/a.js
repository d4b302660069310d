const ITEMS = ["a"]

function add_item(name) {
  fill("Item", name)
}
