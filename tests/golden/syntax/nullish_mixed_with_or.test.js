// id-nullish-mixed
// Nullish mixed with or
// #4f46e5
function test_nullish() {
  let name = null
  let shown = name ?? "guest" || "nobody"
  log(shown)
}
