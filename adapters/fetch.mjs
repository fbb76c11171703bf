// ESM entry of `auth-shield/fetch`: the CommonJS module's exports by name (listed: the error
// classes are copied in from lib/http/unauthorized-error.js, which Node's static scan of CommonJS exports does not
// follow), and the module itself as the default export, as Node gives it for CommonJS.
import fetchEntry from './fetch.js'

export const { createVerifier, protectedResourceMetadata, AuthShieldError, UnauthorizedError, TooManyRequestsError, ServiceUnavailableError, requireScopes, requireAnyScope, requireClaims, requireAuthentication } = fetchEntry
export default fetchEntry
