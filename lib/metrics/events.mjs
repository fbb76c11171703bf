// ESM entry of `auth-shield/events`: the CommonJS module's named exports.
export * from './events.js'
