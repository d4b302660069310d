// Falsy: 0 -0 NaN "" null false. Everything else, [] and {} included, is truthy.
function test_main() {
  log(!!0, !!-0, !!(0 / 0), !!"", !!null, !!false)
  log(!![], !!{}, !!"0", !!" ", !!"false", !!-1, !!0.1, !!(1 / 0), !!/x/)
  log(!"", !"a", ![], !!!null)
  return [0 ? "t" : "f", "" ? "t" : "f", [] ? "t" : "f", {} ? "t" : "f"]
}
