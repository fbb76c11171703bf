// An ESM consumer: the import condition of every entry point, named and
// default exports, typed as precisely as the CommonJS ones.
import authShield, { Authenticator, authenticateRequest } from 'auth-shield'
import type { AuthConfig, AuthResult } from 'auth-shield'

const config: AuthConfig = { accessSecret: 'a-secret-of-at-least-thirty-two-bytes!!', rateLimitMax: 0 }
const auth = new Authenticator(config)
const token: string = auth.signAccessToken({ sub: 'user-1' })
const named: AuthResult = auth.authenticate(`Bearer ${token}`)
const viaDefault: AuthResult = new authShield.Authenticator(config).authenticate(`Bearer ${token}`)
const oneShot: AuthResult = authenticateRequest(`Bearer ${token}`, null, null, config)
// @ts-expect-error the default export is the same module, not a callable
authShield()

export { named, viaDefault, oneShot }
