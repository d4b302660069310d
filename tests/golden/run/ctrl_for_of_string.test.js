// for...of over a string visits its characters.
function test_main() {
  let out = []
  for (const ch of "héllo") {
    out.push(ch)
  }
  log(out, out.length)
  for (const ch of "") {
    log("never")
  }
  let vowels = 0
  for (const ch of "Programming") {
    if ("aeiou".includes(ch)) {
      vowels += 1
    }
  }
  return vowels
}
