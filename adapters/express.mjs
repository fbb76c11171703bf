// ESM entry of `auth-shield/express`: the CommonJS module re-exported, its
// function as the default export and its named exports by name.
export * from './express.js'
export { default } from './express.js'
