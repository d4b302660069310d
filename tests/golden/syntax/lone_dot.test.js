// id-lone-dot
// Lone dot
// #4f46e5
function test_save() {
  items.
}
