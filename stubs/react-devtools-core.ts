// ink imports react-devtools-core only when DEV is set; `bun build --compile`
// cannot bundle the real package, so the binary gets this no-op in its place.
export default { initialize() {}, connectToDevTools() {} };
