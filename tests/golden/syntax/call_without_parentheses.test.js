// id-call-without-parentheses
// Call without parentheses
// #4f46e5
function test_save() {
  log "saved"
}
