// Keywords (and reserved words) are fine as object keys and after a dot.
function test_main() {
  let o = { if: 1, else: 2, for: 3, of: 4, while: 5, let: 6, const: 7, function: 8 }
  log(o.if, o.else, o.for, o.of, o.while, o.let, o.const, o.function)
  let p = { return: "r", try: "t", catch: "c", finally: "f", throw: "th", null: "n", true: "yes", false: "no" }
  log(p.return, p.try, p.catch, p.finally, p.throw, p.null, p.true, p.false)
  let q = { class: "btn", new: 1, default: 2, typeof: 3, in: 4, undefined: 5 }
  q.break = "b"
  q.continue = "c"
  q["var"] = "v"
  log(q.class, q.new, q.default, q.typeof, q.in, q.undefined, q.break, q.continue, q.var)
  return o
}
