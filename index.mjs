// ESM entry point: the CommonJS API of native.js, as named exports and as the
// default export. Node finds the names by static analysis of the CommonJS files,
// so this file never needs a list kept in sync with the binding.
export * from './native.js'
export { default } from './native.js'
