// The vocabulary of docs/vocabulary.md as a strict-TypeScript consumer meets it: each name or
// call shape renamed in CHANGELOG.md (Unreleased) is a compile error (an `@ts-expect-error`
// whose line compiles fails the build), and the name that replaced it compiles.

import { Authenticator, OtpStore, generateApiKey, hashApiKey, parseApiKey, resolveTenant, verifyApiKey } from 'auth-shield'
import type { ApiKeyErrorCode, AuthResult, ErrorCode, OtpErrorCode, TokenVerification } from 'auth-shield'
import authShield = require('auth-shield/express')
import express = require('express')

function requiredEnv(name: string): string {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set`)
  return value
}

const secret = requiredEnv('API_KEY_SECRET')
const auth = new Authenticator({ accessSecret: requiredEnv('ACCESS_SECRET') })

// Token checks: `valid`, `expiresAtSec` (JWT NumericDate seconds), no status on success.
const v: TokenVerification = auth.verifyAccessToken('a.b.c')
const expiresAtSec: number | undefined = v.valid ? v.expiresAtSec : undefined
// @ts-expect-error renamed: expiresAt is expiresAtSec (seconds, not milliseconds)
const oldExpiresAt = v.expiresAt
// @ts-expect-error the boolean of a token check is `valid`; `authenticated` is a request's verdict
const tokenAuthenticated = v.authenticated
if (v.valid) {
  const none: undefined = v.errorStatus
  // @ts-expect-error changed: errorStatus is undefined on success (it was 200)
  const okStatus: 200 = v.errorStatus
} else {
  const status: 400 | 401 | 403 | 429 = v.errorStatus
  const code: ErrorCode = v.errorCode
}

// The request verdict: `authenticated`, and the error triple only on failure.
const r: AuthResult = auth.authenticate(undefined)
if (r.authenticated) {
  const none: undefined = r.errorStatus
  // @ts-expect-error changed: errorStatus is undefined on success (it was 200)
  const wasOk: number = r.errorStatus
} else {
  const message: string = r.error
  const code: ErrorCode = r.errorCode
  // @ts-expect-error the failure code is errorCode; error is the message
  const misspelt: boolean = r.errorCode === 'token_expierd'
}

// OtpStore#verify: errorCode and error, as every other check (was `reason`, with 'ok').
const store = new OtpStore()
const check = store.verify('user-1', '123456')
// @ts-expect-error renamed: reason is errorCode
const oldReason = check.reason
if (!check.valid) {
  const code: OtpErrorCode = check.errorCode
  const message: string = check.error
  // @ts-expect-error there is no 'ok' code: a passed check has no errorCode
  const okCode: boolean = check.errorCode === 'ok'
}

// parseApiKey: errorCode is the code, error the message (comparing error with a code does not compile).
const parsed = parseApiKey('auth1_pk_x')
if (!parsed.valid) {
  const code: ApiKeyErrorCode = parsed.errorCode
  // @ts-expect-error changed: error is the message; compare errorCode with 'malformed'
  const oldCodeCheck: boolean = parsed.error === 'malformed'
}

// API keys: the stored value first, the presented one second, the server secret an option.
const row = generateApiKey({ secret })
const ok: boolean = verifyApiKey(row.hash, row.key, { secret })
const lookup: string | null = hashApiKey(row.key, { secret })
// @ts-expect-error changed: the secret is the option `secret`, not a third positional argument
verifyApiKey(row.hash, row.key, secret)
// @ts-expect-error changed: the secret is the option `secret`
hashApiKey(row.key, secret)
// @ts-expect-error the options need the secret
hashApiKey(row.key, {})

// resolveTenant: the header arguments in `authenticate`'s order (tenantHeader, host).
const tenant = resolveTenant('acme', 'acme.example.com', { baseDomain: 'example.com' })
// @ts-expect-error resolveTenant takes at most three arguments
resolveTenant('acme', 'acme.example.com', {}, 'extra')

// Express: req.requestId as on Fastify's request; req.id stays as Express's alias.
const app = express()
app.use(authShield(auth))
app.get('/me', (req, res) => {
  const id: string | undefined = req.requestId
  const alias: string | undefined = req.id
  res.json({ id, alias })
})
// @ts-expect-error the middleware's options are the ones of docs/vocabulary.md
authShield(auth, { requestIdProperty: 'rid' })

export { expiresAtSec, oldExpiresAt, tokenAuthenticated, oldReason, ok, lookup, tenant }
