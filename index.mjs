// ESM entry point: the CommonJS entry's names, as named exports and as the default export.
// Node finds the names by static analysis of index.js (its `module.exports = { ... }` list).
export * from './index.js'
export { default } from './index.js'
