// The resource-server names (issue 25) as a TypeScript user writes them.
import authShield = require('auth-shield/express')
import fastifyPlugin = require('auth-shield/fastify')
import koaAuthShield = require('auth-shield/koa')
import fetchEntry = require('auth-shield/fetch')
import { Authenticator } from 'auth-shield'

const meta = authShield.protectedResourceMetadata({ resource: 'https://api.example/', authorizationServers: ['https://as.example'], scopesSupported: ['read'] })
const path: string = meta.path
const url: string = meta.url
authShield({ accessSecret: 'x'.repeat(32), requiredScope: ['read', 'write'] }, { resourceMetadata: meta, realm: 'api' })
authShield({ accessSecret: 'x'.repeat(32), requiredScope: 'read' }, { resourceMetadata: 'https://api.example/.well-known/oauth-protected-resource' })
const f = fastifyPlugin.protectedResourceMetadata({ resource: 'https://api.example/' })
const k = koaAuthShield.protectedResourceMetadata({ resource: 'https://api.example/', bearerMethodsSupported: ['header'] })
const r: Response = fetchEntry.protectedResourceMetadata({ resource: 'https://api.example/' }).handler()
const scopes: string[] = new Authenticator({ accessSecret: 'x'.repeat(32) }).requiredScope
void [path, url, f, k, r, scopes]

// Trusted issuers with discovery: issuer identifiers only, the config without issuer or keys.
import jwksEntry = require('auth-shield/jwks')
const trusted = jwksEntry.createTrustedIssuers(['https://tenant-a.idp.example/', 'https://tenant-b.idp.example/'], { cooldownMs: 5000 })
authShield({ audience: 'https://api.example/', requiredScope: 'read' }, { jwks: trusted })
fetchEntry.createVerifier({ audience: 'https://api.example/' }, { jwks: trusted })
const trustedList: readonly string[] = trusted.issuers
const firstUri: string | null | undefined = trusted.status()[0]?.jwksUri
trusted.on('error', (err) => void (err.code satisfies jwksEntry.JwksErrorCode))
const maxIssuers: number = jwksEntry.MAX_ISSUERS
// Key-set health per issuer, as a RemoteJwks's (prometheusHandler({ jwks: { idp: trusted } })).
const issuerAge: number | null | undefined = trusted.metrics().issuers['https://tenant-a.idp.example/']?.keyAgeSeconds
const allKeys: boolean = trusted.metrics().keysAvailable
authShield({ audience: 'https://api.example/' }, { jwks: trusted, algorithms: ['RS256'] })
jwksEntry.createTrustedIssuers(['https://a.example/', { issuer: 'https://b.example/', audience: ['api'], algorithms: ['RS256'], jwksUri: 'https://b.example/keys' }])
// Opaque tokens of an issuer, introspected (RFC 7662, RFC 9701).
const opaque = jwksEntry.createTrustedIssuers([
  { issuer: 'https://login.example/', audience: 'https://api.example/', introspection: { clientId: 'api', clientSecret: 's', cacheMaxSec: 60, negativeCacheSec: 5, jwtResponse: true } },
])
const introspected: number | undefined = opaque.status()[0]?.introspection?.introspections
jwksEntry.createTrustedIssuers([{ issuer: 'https://login.example/', introspection: { clientId: 'api', privateKey: 'PEM', authMethod: 'private_key_jwt', endpoint: 'https://login.example/introspect' } }])
void [trustedList, firstUri, maxIssuers, issuerAge, allKeys, introspected]

// Per-route requirements in every adapter.
const readOrders: authShield.RouteRequirement = authShield.requireScopes('read:orders', 'write:orders')
authShield.requireScopes(['read:orders'])
authShield.requireAnyScope('read:orders', 'Orders.Read')
authShield.requireClaims({ tid: 'x', roles: ['admin'], realm_access: { roles: 'admin' }, email_verified: true, level: 2 })
authShield.requireAuthentication({ acrValues: ['mfa'], maxAgeSec: 300 })
const fastifyHook: fastifyPlugin.RouteRequirement = fastifyPlugin.requireAnyScope('read')
const koaStep: koaAuthShield.RouteRequirement = koaAuthShield.requireAuthentication({ acrValues: 'mfa' })
const verifyRequest = fetchEntry.createVerifier({ accessSecret: 'x'.repeat(32) })
async function fetchRoute(request: Request): Promise<Response> {
  const auth = await fetchEntry.requireScopes('read:orders')(verifyRequest(request))
  if (!auth.ok) return auth.response
  const again: fetchEntry.Verification = fetchEntry.requireClaims({ tid: 't' })(auth)
  return new Response(String(again.ok))
}
// @ts-expect-error a claim value may not be null
authShield.requireClaims({ tid: null })
void [readOrders, fastifyHook, koaStep, fetchRoute]

// AuthResult.scope: the granted scopes on a success, undefined on a failure.
const scopedResult = new Authenticator({ accessSecret: 'x'.repeat(32) }).authenticate('Bearer x')
if (scopedResult.authenticated) {
  const granted: string | null | undefined = scopedResult.scope
  if (typeof granted === 'string') void granted.split(' ')
} else {
  const none: undefined = scopedResult.scope
  void none
}
// @ts-expect-error scope is a space-delimited string, not a list
const notAList: string[] = scopedResult.scope
void notAList
