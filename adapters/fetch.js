'use strict'

// `require('auth-shield/fetch')`: the auth chain for code that handles Fetch-API `Request`s
// (Next.js route handlers, Hono, Remix, Bun and Deno style servers). No framework to hand a
// failure to: the caller gets the decision (lib/http/decision.js, shared with every adapter) and answers
// a refusal with its ready `Response`, the same status, `{ error, code }` body and headers the
// Express middleware sends.
//
//   const { createVerifier } = require('auth-shield/fetch')
//   const verifyRequest = createVerifier({ accessSecret: process.env.JWT_SECRET })
//   export async function GET(request) {
//     const auth = await verifyRequest(request)
//     if (!auth.ok) return auth.response
//     return Response.json({ user: auth.user }, { headers: auth.headers })
//   }
//
// A factory rather than a bare `verifyRequest(request)`: the options are checked and the
// engine, its limiter buckets and any key source or store are built once, not per request
// (fast-jwt's pattern); each verifier has its own limiter state and stats.

const { AuthDecision, isPending, pathOf, ERROR_CLASSES } = require('../lib/http/decision')
const { typeError } = require('../base/error')
const { fromCertificate } = require('../lib/http/client-cert')
const { ROUTE_PASS, routeRequirements, notAuthenticated } = require('../lib/http/route-requirements')

// No framework error handler to hand failures to: they are always answered (the Response).
const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * A `verifyRequest(request)` for `configOrAuthenticator` (an authenticator config, or an
 * Authenticator of either engine) and the shared middleware options (`onError` and `errors`
 * aside: the caller decides what to do with a refusal). The callbacks (getToken, isRevoked,
 * skip / unless) receive the `Request`.
 */
function createVerifier(configOrAuthenticator, options) {
  // The callbacks get the Request; no socket here: the caller hands the client certificate to verifyRequest.
  const decision = new AuthDecision(configOrAuthenticator, options, undefined, 'fetch', { subjectOf: requestOf, senderOf: (view) => view.sender })
  if (decision.options.onError !== undefined) {
    throw typeError('options.onError is not an option of auth-shield/fetch: answer the refusal (its response) yourself')
  }
  // With the tracing option, the decision's span attributes (lib/metrics/tracing.js).
  const decide = decision.traced((view, path) => decision.decide(view, path))

  /**
   * The decision for `request`, always a Promise: a `Verified` (`ok` true: `action` 'pass' or
   * 'skip') or a `Refused` (`ok` false, with `status`, `code`, `headers` and `response`). What a
   * callback throws or rejects with, or a callback past `callbackTimeoutMs`, rejects it with a
   * real Error (lib/http/callback-fence.js): the request is never let through.
   * `requestOptions.clientCertificate` is the TLS client certificate of the request (DER bytes
   * or an X509Certificate) for certificate-bound tokens; give it only when your server verified
   * the TLS handshake that presented it (docs/sender-constrained.md).
   */
  async function verifyRequest(request, requestOptions) {
    // `url` is serialised on every read: read once.
    const url = request !== null && typeof request === 'object' ? request.url : undefined
    if (typeof url !== 'string' || request.headers == null || typeof request.headers.get !== 'function') {
      throw typeError('verifyRequest needs a Fetch API Request')
    }
    const view = new RequestView(request, url)
    if (requestOptions !== undefined && requestOptions !== null) {
      if (typeof requestOptions !== 'object') throw typeError('verifyRequest options must be an object')
      const given = requestOptions.clientCertificate
      // Hashed only when the authenticator checks bound tokens.
      if (decision.senderOf !== null) view.sender = fromCertificate(given, 'options.clientCertificate')
    }
    let d = decide(view, pathOf(pathAndQueryOf(url)))
    if (isPending(d)) d = await d
    if (d.action === 'skip') return skipped()
    return d.action === 'pass' ? new Verified(d) : new Refused(d, decision)
  }

  verifyRequest.engine = decision.engine.name
  verifyRequest.authenticator = decision.engine.authenticator
  verifyRequest.stats = decision.engine.stats
  // Internal: where adapter options (a JWKS source, a shared store) register their recoveries.
  Object.defineProperty(verifyRequest, 'decision', { value: decision })
  return verifyRequest
}

/**
 * What the decision reads of a Request, in Node's form: `method` and `headers` by lowercase name
 * (undefined when absent). Each header is read when the decision asks for it (a `Headers#get`
 * costs about a microsecond): a request with an Authorization header never reads its cookies.
 * A Request built by a server carries Host; one built by hand may not, then its URL's host
 * stands in (tenant resolution by subdomain).
 */
class RequestView {
  constructor(request, url) {
    this.request = request
    this.method = request.method
    // The request target, for a DPoP proof's htu with the configured dpopOrigin (lib/http/dpop.js).
    this.originalUrl = pathAndQueryOf(url)
    this.headers = new HeadersView(request.headers, url)
    // The sender context of the client certificate the caller gave, if any.
    this.sender = undefined
  }
}

class HeadersView {
  constructor(headers, url) {
    this.fetchHeaders = headers
    this.url = url
  }

  get authorization() {
    return this.fetchHeaders.get('authorization') ?? undefined
  }

  get cookie() {
    return this.fetchHeaders.get('cookie') ?? undefined
  }

  get host() {
    return this.fetchHeaders.get('host') ?? hostOf(this.url)
  }

  get dpop() {
    return this.fetchHeaders.get('dpop') ?? undefined
  }

  get 'x-tenant-id'() {
    return this.fetchHeaders.get('x-tenant-id') ?? undefined
  }

  get 'access-control-request-method'() {
    return this.fetchHeaders.get('access-control-request-method') ?? undefined
  }
}

function requestOf(view) {
  return view.request
}

/** `/path?query` of an absolute URL (the path the skip rules match; a fragment is dropped). */
function pathAndQueryOf(url) {
  const scheme = url.indexOf('//')
  const start = url.indexOf('/', scheme < 0 ? 0 : scheme + 2)
  if (start < 0) return '/'
  const hash = url.indexOf('#', start)
  return hash < 0 ? url.slice(start) : url.slice(start, hash)
}

function hostOf(url) {
  try {
    return new URL(url).host || undefined
  } catch {
    return undefined
  }
}

/**
 * A skipped request: nothing checked, nothing to set. The fields of an anonymous pass, all
 * undefined, and a fresh empty `headers` the route may hand to a Response and extend.
 */
function skipped() {
  return { ok: true, action: 'skip', requestId: undefined, headers: [], user: undefined, tenantId: undefined, tenantSource: undefined, claims: undefined }
}

/**
 * A request that passed: `user` ({ userId, email, role }), `tenantId`, `tenantSource` (all
 * undefined for an anonymous pass), `requestId`, `headers` ([name, value] pairs: X-Request-Id,
 * rate-limit headers) to set on the response, and `claims`, the verified payload parsed on first read.
 */
class Verified {
  constructor(d) {
    this.ok = true
    this.action = 'pass'
    this.requestId = d.requestId
    this.headers = d.headers
    // user, tenantId, tenantSource
    Object.assign(this, d.identity)
    this.#pass = d
    // For the route requirements (requireScopes, …): not enumerable, not in JSON.
    Object.defineProperty(this, ROUTE_PASS, { value: d })
  }

  #pass

  get claims() {
    return this.#pass.claims
  }
}

/**
 * A refused request: `status`, `code`, `error` (the message), `requestId`, `headers`
 * (X-Request-Id, WWW-Authenticate, Retry-After, rate-limit headers), `body` (the JSON text),
 * `result` (the AuthResult), `response` (a Response with all of them, made on first read) and
 * `toError()`, the error `errors: 'next'` gives in the other adapters.
 */
class Refused {
  constructor(d, decision) {
    this.ok = false
    this.action = 'fail'
    this.requestId = d.requestId
    this.status = d.status
    this.code = d.result.errorCode
    this.error = d.result.error
    this.headers = d.headers
    this.body = d.body
    this.result = d.result
    this.#fail = d
    this.#decision = decision
  }

  #fail
  #decision
  #response

  get response() {
    if (this.#response === undefined) {
      const headers = new Headers(this.headers)
      headers.set('Content-Type', JSON_TYPE)
      this.#response = new Response(this.body, { status: this.status, headers })
    }
    return this.#response
  }

  toError() {
    return this.#decision.unauthorizedError(this.#fail)
  }
}

// RFC 9728 protected-resource metadata: the document, its URL (the verifier's
// `resourceMetadata` option) and a `handler` answering it with a Response.
const protectedResourceMetadata = require('../lib/http/resource-metadata').metadataFor('fetch')

/**
 * The route requirements (lib/http/route-requirements.js) as checks of a verifier's answer:
 * `check(auth)` gives `auth` itself when it meets the requirement (or is a Refused already), else
 * a Refused to answer with; given a Promise of an answer, a Promise of that.
 *
 *   const auth = requireScopes('read:orders')(await verifyRequest(request))
 *   if (!auth.ok) return auth.response
 */
const requirements = routeRequirements((requirement) => {
  const check = (auth) => {
    if (auth instanceof Refused) return auth
    const pass = auth !== null && typeof auth === 'object' ? auth[ROUTE_PASS] : undefined
    if (pass === undefined) throw notAuthenticated(requirement.name)
    const d = requirement.refusal(pass)
    return d === null ? auth : new Refused(d, pass.decision)
  }
  return function authShieldRequirement(auth) {
    return auth instanceof Promise ? auth.then(check) : check(auth)
  }
})

module.exports = { createVerifier, protectedResourceMetadata, ...ERROR_CLASSES, ...requirements }
