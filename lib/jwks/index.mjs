// ESM entry of `auth-shield/jwks`: the CommonJS module's named exports.
export * from './index.js'
