// ESM entry of `auth-shield/redis`: the CommonJS module's named exports.
export * from './index.js'
