const A = [1]
const B = `x${A}`
