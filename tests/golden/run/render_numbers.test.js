// Numbers print as JavaScript's Number#toString: no ".0", exponents from 1e21 and 1e-7.
function test_main() {
  log(1, -1, 1.0, 100, 2.50, 0.1 + 0.2, 1 / 3, 100 / 3, -0)
  log(1e21, 1e20, 123456789012345680000, 1.5e300 * 1e10, 1e-7, 1e-6, 0.000001234, 1.23e-18)
  log(0x1F, 0xff, 1_000_000, 1e3, .5, 5e-324, 1.7976931348623157e308, 2e21 / 2)
  log(1 / 0, -1 / 0, 0 / 0, [1.0, 2.5, -0], { n: 3.0 })
  return 0.1 * 3
}
