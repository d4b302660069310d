
const ITEMS = ["b"]
const add_item = 3
