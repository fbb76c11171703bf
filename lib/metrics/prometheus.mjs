// ESM entry of `auth-shield/prometheus`: the CommonJS module's named exports.
export * from './prometheus.js'
