// id-free-standing-block
// free_standing_block
// #4f46e5
function test_main() {
  { let a = 1 }
}
