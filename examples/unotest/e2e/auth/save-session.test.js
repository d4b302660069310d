// id-auth-save-session
// Signs in once and saves the session for the signed-in collection
// #059669
function test_save_session() {
  sign_in(env("DEMO_USER", "ada"), env("DEMO_PASSWORD", "lovelace"))
  save_storage_state("unotest/.auth/session.json")
}
