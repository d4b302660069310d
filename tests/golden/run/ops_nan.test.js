// NaN (there is no NaN literal: 0 / 0 makes one) is unequal to itself and falsy.
function test_main() {
  let nan = 0 / 0
  log(nan, nan === nan, nan !== nan, nan == nan, [nan] === [nan])
  log(nan < 1, nan > 1, nan <= nan, nan >= nan)
  log(!nan, nan || "fallback", nan ?? "kept", nan + 1, nan * 0)
  log([nan].includes(nan), [nan].indexOf(nan))
  return nan
}
