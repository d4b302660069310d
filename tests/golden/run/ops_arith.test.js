// Arithmetic on numbers (all floats): division by zero, remainders, -0.
function test_main() {
  log(7 / 2, 7 % 2, -7 % 2, 7 % -2, 5.5 % 2, 0.5 + 0.25)
  log(1 / 0, -1 / 0, 0 / 0, 1 / -0, -0, 0 * -1)
  log(5 % 0, 1 / 0 % 2, 5 % (1 / 0))
  log(3 * 0.1, 1 - 0.9, 0.1 + 0.2 === 0.3, 2 * 3 === 6)
  return 9007199254740993
}
