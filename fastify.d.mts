// Types of the ESM entry of `auth-shield/fastify` (fastify.mjs): the plugin as the default
// export, AuthShieldError and the option types by name.
import authShield = require('./fastify.js')
export default authShield
export import AuthShieldError = authShield.AuthShieldError
export type FastifyAuthShieldOptions = authShield.FastifyAuthShieldOptions
export type AuthShieldStats = authShield.AuthShieldStats
export type AuthUser = authShield.AuthUser
export type ShadowMismatch = authShield.ShadowMismatch
export type EngineName = authShield.EngineName
