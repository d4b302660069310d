const TODO_ITEMS = ["buy some cheese", "feed the cat", "book a doctors appointment"]
const CONFIG = { user: "ada", limits: { max: 3 }, tags: ["a", "b"], price: /\d+ €/, neg: -1 }
const empty_note = `none`

function first_item() {
  return TODO_ITEMS[0]
}
