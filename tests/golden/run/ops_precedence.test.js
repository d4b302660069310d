// JavaScript precedence: unary > * / % > + - > < <= > >= > == != === !== > && > || > ?? > ?:
function test_main() {
  log(2 + 3 * 4, (2 + 3) * 4, 2 * 3 + 4, 20 - 6 / 2, 7 + 10 % 4)
  log(-2 * 3, -(2 * 3), - -3, 1 - -1, +5 + 1, !0 + "", !1 === false)
  log(1 + 2 < 4, 2 * 3 >= 6, 1 < 2 === true, 3 > 2 !== false)
  log(true || false && false, (true || false) && false)
  log(1 === 1 && 2 === 2, 1 === 2 || 3 === 3)
  log(null ?? 1 + 1, (null ?? 1) + 1)
  log(true ? 1 : 2, false ? 1 : 2 + 10, 1 > 2 ? "gt" : "le")
  log(null ?? false ? "yes" : "no", 0 || null ? "yes" : "no")
  return 1 + 2 * 3 - 4 / 2 % 3
}
