// ESM entry of `auth-shield/hono`: the CommonJS module, its function as the default export and
// its named exports by name.
import authShield from './hono.js'

export default authShield
export { authShield }
export const { requireScopes, requireAnyScope, requireClaims, requireAuthentication, protectedResourceMetadata, AuthShieldError, UnauthorizedError, TooManyRequestsError, ServiceUnavailableError } = authShield
