const BASE = "/shop"
const LIMITS = { max: 3, home: BASE }

function open_shop() {
  goto(BASE)
}
