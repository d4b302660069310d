// log shows strings as they are and other values rendered; nested strings are quoted.
function test_main() {
  log("plain text", null, true, false, [], {}, [[]], [{}])
  log([1, "two", null, [3, [4, "five"]]], { a: 1, b: { c: [true, null] } })
  log({ "data-id": 3, "with space": "x", _ok: 1, $too: 2, "": "empty key" })
  log(["quote \" and \\ backslash", "tab\there", "new\nline"], /a+b/gi, [/x/])
  log({ nested: { deeper: { deepest: [{ k: "v" }] } } })
  log("said: \"hi\"")
  // The final line renders the return value: strings quoted, escapes shown.
  return { text: "two\nlines, a \"quote\"", list: ["a"], none: null }
}
