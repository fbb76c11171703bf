// ESM entry of `auth-shield/koa`: the CommonJS module, its function as the default export and
// its named exports by name (listed: the error classes are copied in from lib/http/unauthorized-error.js, which
// Node's static scan of CommonJS exports does not follow).
import authShield from './koa.js'

export default authShield
export { authShield }
export const { protectedResourceMetadata, AuthShieldError, UnauthorizedError, TooManyRequestsError, ServiceUnavailableError, requireScopes, requireAnyScope, requireClaims, requireAuthentication } = authShield
