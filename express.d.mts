// Types of the ESM entry of `auth-shield/express` (express.mjs): the middleware factory as the
// default export, AuthShieldError and the option types by name.
import authShield = require('./express.js')
export default authShield
export import AuthShieldError = authShield.AuthShieldError
export type ExpressAuthShieldOptions = authShield.ExpressAuthShieldOptions
export type AuthShieldMiddleware = authShield.AuthShieldMiddleware
export type AuthShieldStats = authShield.AuthShieldStats
export type AuthUser = authShield.AuthUser
export type ShadowMismatch = authShield.ShadowMismatch
export type EngineName = authShield.EngineName
