// ESM entry of `auth-shield/fastify`: the CommonJS module re-exported, its
// function as the default export and its named exports by name.
export * from './fastify.js'
export { default } from './fastify.js'
