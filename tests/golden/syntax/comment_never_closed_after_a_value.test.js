// id-comment-never-closed-after-a-value
// comment_never_closed_after_a_value
// #4f46e5
function test_main() {
  let x = 1 /* unterminated
}
