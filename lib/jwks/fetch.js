'use strict'

// One fetch of a remote JWKS document (lib/jwks/source.js): the configured URL and nothing else.
// A redirect is never followed: a 3xx is a failed fetch like any other status but 200, so the
// key set in force stays. (Followed, a redirect from the identity provider's URL, or from a
// proxy or a compromised path in front of it, would install whatever keys another host serves:
// the attacker's tokens accepted, the real ones refused.) The body is read under a byte cap and
// the whole exchange under a time-out.

const { typeError } = require('../../base/error')
const { jwksError } = require('./document')

// The status of a fetch refused for its status (discovery tries its second document on a 404 only).
const HTTP_STATUS = Symbol('auth-shield.jwks-http-status')

/** The document's bytes: status 200, at most `maxBytes`, within `timeoutMs` from request to last byte. */
async function fetchDocument(url, limits, closing) {
  return (await fetchResponse(url, limits, closing, GET)).bytes
}

const GET = Object.freeze({ headers: { accept: 'application/json, application/jwk-set+json' } })

/**
 * As fetchDocument, with the request's `init` (method, headers, body: token introspection's
 * POST, lib/introspection/client.js): `{ bytes, contentType }` of a 200 answer.
 */
async function fetchResponse(url, { timeoutMs, maxBytes }, closing, init) {
  const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), closing])
  const failed = (err) => {
    if (closing.aborted) return jwksError('ERR_AUTH_SHIELD_JWKS_CLOSED', 'the JWKS source was closed during the fetch')
    if (signal.aborted) return jwksError('ERR_AUTH_SHIELD_JWKS_TIMEOUT', `fetching ${url.href} took over ${timeoutMs} ms`)
    return jwksError('ERR_AUTH_SHIELD_JWKS_FETCH', `fetching ${url.href} failed: ${causeText(err)}`, err)
  }
  let res
  try {
    // `manual`: the 3xx itself comes back, and is refused below; nothing else is fetched.
    res = await fetch(url, { ...init, signal, redirect: 'manual' })
  } catch (err) {
    throw failed(err)
  }
  const tooLarge = () => jwksError('ERR_AUTH_SHIELD_JWKS_TOO_LARGE', `the JWKS at ${url.href} is over maxBytes (${maxBytes})`)
  if (res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400)) {
    discard(res)
    throw jwksError('ERR_AUTH_SHIELD_JWKS_FETCH', `fetching ${url.href} answered a redirect (HTTP ${res.status}): only the configured URL is fetched, redirects are never followed`)
  }
  if (res.status !== 200) {
    discard(res)
    const err = jwksError('ERR_AUTH_SHIELD_JWKS_FETCH', `fetching ${url.href} answered HTTP ${res.status}`)
    err[HTTP_STATUS] = res.status
    throw err
  }
  const declared = Number(res.headers.get('content-length'))
  if (declared > maxBytes) {
    discard(res)
    throw tooLarge()
  }
  const contentType = res.headers.get('content-type')
  if (res.body === null) return { bytes: Buffer.alloc(0), contentType }
  const reader = res.body.getReader()
  const chunks = []
  let total = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      total += value.byteLength
      // Stop reading at the first chunk past the cap: a hostile server cannot make us buffer more.
      if (total > maxBytes) {
        reader.cancel().catch(() => {})
        throw tooLarge()
      }
      chunks.push(value)
    }
  } catch (err) {
    throw err.code === 'ERR_AUTH_SHIELD_JWKS_TOO_LARGE' ? err : failed(err)
  }
  return { bytes: Buffer.concat(chunks, total), contentType }
}

/**
 * `err`'s message with the causes under it: undici says only "fetch failed" and keeps the reason
 * (`connect ECONNREFUSED 127.0.0.1:8443`, a certificate error, a DNS failure) in `cause`, which
 * an operator reading a log line needs. At most four levels; each message once.
 */
function causeText(err) {
  const parts = []
  for (let e = err, depth = 0; e != null && depth < 4; e = e.cause, depth++) {
    const text = e instanceof Error ? (e.code && !String(e.message).includes(e.code) ? `${e.message} (${e.code})` : e.message) : String(e)
    if (text && !parts.includes(text)) parts.push(text)
    if (!(e instanceof Error)) break
  }
  return parts.join(': ') || 'unknown error'
}

function discard(res) {
  if (res.body !== null) res.body.cancel().catch(() => {})
}

/** The configured URL, copied: http: or https: only. */
function readUrl(url) {
  let parsed
  if (url instanceof URL) parsed = new URL(url.href)
  else if (typeof url === 'string') {
    try {
      parsed = new URL(url)
    } catch {
      throw typeError(`the JWKS URL is not a valid URL: ${JSON.stringify(url)}`)
    }
  } else throw typeError('the JWKS URL must be a string or a URL')
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw typeError(`the JWKS URL must be http: or https:, got ${parsed.protocol}`)
  }
  return parsed
}

module.exports = { fetchDocument, fetchResponse, readUrl, HTTP_STATUS, causeText }
