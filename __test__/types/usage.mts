// An ESM consumer: the import condition of every entry point, named and
// default exports, typed as precisely as the CommonJS ones.
import authShieldNative, { Authenticator, authenticateRequest } from 'auth-shield'
import type { AuthConfig, AuthResult } from 'auth-shield'
import expressAuth, { authShield, AuthShieldError } from 'auth-shield/express'
import type { DpopMode } from 'auth-shield/express'
import fastifyAuth from 'auth-shield/fastify'
import jsEngine, { Authenticator as JsAuthenticator } from 'auth-shield/js'
import express from 'express'
import Fastify from 'fastify'

const config: AuthConfig = { accessSecret: 'a-secret-of-at-least-thirty-two-bytes!!', rateLimitMax: 0 }
const auth = new Authenticator(config)
const token: string = auth.signAccessToken({ sub: 'user-1' })
const named: AuthResult = auth.authenticate(`Bearer ${token}`)
const viaDefault: AuthResult = new authShieldNative.Authenticator(config).authenticate(`Bearer ${token}`)
const oneShot: AuthResult = authenticateRequest(`Bearer ${token}`, null, null, config)
// @ts-expect-error the default export is the module object, not a function
authShieldNative()

const jsResult: AuthResult = new JsAuthenticator(config).authenticate(`Bearer ${token}`)
const jsViaDefault: AuthResult = jsEngine.authenticateRequest(`Bearer ${token}`, null, null, config)

const app = express()
app.use(expressAuth(config), authShield(new JsAuthenticator(config), { engine: 'js' }))
app.get('/me', (req, res) => res.json({ userId: req.user?.userId }))
// Per-route DPoP modes (docs/sender-constrained.md).
const dpopModes: DpopMode[] = ['disabled', 'allowed', 'required']
app.get('/pay', authShield(config, { dpopOrigin: 'https://api.example.com', dpopMode: dpopModes[2] }))
// @ts-expect-error a mode is one of three words
authShield(config, { dpopMode: true })
// Behind a proxy that rewrites the path: the external URL, rebuilt from the request.
app.get('/orders', authShield(config, { dpopUrl: (req) => `https://api.example.com/api${req.originalUrl}`, dpopMode: 'required' }))
// @ts-expect-error dpopUrl answers the URL now, never a Promise of it
authShield(config, { dpopUrl: async () => 'https://api.example.com/api/orders' })
const isAuthError = (e: unknown): boolean => e instanceof AuthShieldError

const fastify = Fastify()
await fastify.register(fastifyAuth, { config })
await fastify.register(fastifyAuth, { config, dpopUrl: (request) => `https://api.example.com/api${request.url}` })
fastify.get('/me', async (request) => ({ userId: request.user?.userId ?? null }))

export { named, viaDefault, oneShot, jsResult, jsViaDefault, isAuthError }
