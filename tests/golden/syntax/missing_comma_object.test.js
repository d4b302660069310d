// id-missing-comma-object
// Missing comma object
// #4f46e5
function test_save() {
  click(role("button", { name: "Save" exact: true }))
}
