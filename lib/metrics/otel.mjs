// ESM entry of `auth-shield/otel`: the CommonJS module's named exports.
export * from './otel.js'
