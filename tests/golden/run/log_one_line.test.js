// log() writes one line: line breaks and control characters as escapes, a tab kept.
function test_main() {
  log("two\nlines", "carriage\rreturn", "tab\tkept")
  log("esc\u001b[31mred", "nul\u0000", "del\u007f", "ls\u2028ps\u2029")
  log(["a\nb"], { k: "c\rd" })
  log(`template
spanning two lines`)
  return "a\nb"
}
