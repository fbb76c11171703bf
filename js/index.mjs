// ESM entry of `auth-shield/js`: the pure-JS engine's CommonJS API re-exported.
export * from './index.js'
export { default } from './index.js'
