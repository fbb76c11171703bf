'use strict'

// Discovery of one trusted issuer's key set URL (lib/jwks/issuers.js): the issuer's OpenID
// Connect metadata (OpenID Connect Discovery 1.0 §4: `<issuer>/.well-known/openid-configuration`),
// else, when that answers 404, its RFC 8414 metadata (§3: `/.well-known/oauth-authorization-server`
// inserted between the host and the issuer's path). Fetched as a JWKS is (lib/jwks/fetch.js: no redirect, a byte cap,
// a time-out); only URLs derived from the configured issuer are fetched, never one from a token.
//
// Checks (mix-up defence, OpenID Connect Discovery §4.3, RFC 8414 §3.3): the document's `issuer`
// must equal the configured one exactly (no trailing-slash or case folding), and its `jwks_uri`
// must be https:, or http: on a loopback host only when the issuer itself is (tests, local
// development). The `jwks_uri` may be on another origin than the issuer (Google and Azure AD
// publish keys elsewhere): the document came from the configured issuer's own origin.

const { typeError } = require('../../base/error')
const { jwksError } = require('./document')
const { fetchDocument, HTTP_STATUS } = require('./fetch')

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost'])

function isLoopback(url) {
  return url.protocol === 'http:' && LOOPBACK.has(url.hostname)
}

/**
 * A configured issuer identifier, checked: an https: URL (http: on loopback) without query or
 * fragment (RFC 8414 §2). The string itself is what tokens' `iss` must equal.
 */
function readIssuer(issuer) {
  if (typeof issuer !== 'string' || issuer.length === 0 || issuer.length > 2048) {
    throw typeError('each trusted issuer must be a non-empty string of at most 2048 characters')
  }
  let url
  try {
    url = new URL(issuer)
  } catch {
    throw typeError(`a trusted issuer is not a valid URL: ${JSON.stringify(issuer)}`)
  }
  if (url.protocol !== 'https:' && !isLoopback(url)) {
    throw typeError(`a trusted issuer must be an https: URL (http: only on loopback): ${JSON.stringify(issuer)}`)
  }
  if (url.search !== '' || url.hash !== '' || issuer.includes('?') || issuer.includes('#')) {
    throw typeError(`a trusted issuer has no query or fragment (RFC 8414 §2): ${JSON.stringify(issuer)}`)
  }
  return url
}

/** The metadata URLs tried, in order: OpenID Connect, then RFC 8414 (path-insertion form). */
function metadataUrls(issuerUrl) {
  const path = issuerUrl.pathname.replace(/\/$/, '')
  return [new URL(`${issuerUrl.origin}${path}/.well-known/openid-configuration`), new URL(`${issuerUrl.origin}/.well-known/oauth-authorization-server${path}`)]
}

/**
 * Fetches the issuer's metadata and resolves to its checked `jwks_uri` (a URL), or to null when
 * it has none and `keysOptional` (an issuer used for introspection only). Rejects with
 * the fetch error (ERR_AUTH_SHIELD_JWKS_FETCH, _TIMEOUT, _TOO_LARGE, _CLOSED), or with
 * `ERR_AUTH_SHIELD_JWKS_DISCOVERY` for a document refused or when both forms answered 404.
 */
async function discoverJwksUri(issuer, issuerUrl, options, signal, keysOptional = false) {
  let bytes = null
  let lastError = null
  for (const url of metadataUrls(issuerUrl)) {
    try {
      bytes = await fetchDocument(url, options, signal)
      break
    } catch (err) {
      lastError = err
      // Only an absent document (404) sends discovery to the second form; any other failure (a
      // time-out, a redirect, an oversized answer, a server error) is the issuer's answer.
      if (err[HTTP_STATUS] !== 404) throw err
    }
  }
  if (bytes === null) throw jwksError('ERR_AUTH_SHIELD_JWKS_DISCOVERY', `no metadata found for the issuer ${issuer}: ${lastError.message}`, lastError)
  let doc
  try {
    doc = JSON.parse(bytes.toString('utf8'))
  } catch {
    throw jwksError('ERR_AUTH_SHIELD_JWKS_DISCOVERY', `the metadata of ${issuer} is not JSON`)
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw jwksError('ERR_AUTH_SHIELD_JWKS_DISCOVERY', `the metadata of ${issuer} is not a JSON object`)
  if (doc.issuer !== issuer) {
    throw jwksError('ERR_AUTH_SHIELD_JWKS_DISCOVERY', `the metadata fetched for ${issuer} names another issuer (${JSON.stringify(String(doc.issuer).slice(0, 256))}): refused (mix-up defence)`)
  }
  // An issuer trusted for introspection only may publish no keys (null: none to fetch).
  if (doc.jwks_uri === undefined && keysOptional) return null
  if (typeof doc.jwks_uri !== 'string') throw jwksError('ERR_AUTH_SHIELD_JWKS_DISCOVERY', `the metadata of ${issuer} has no jwks_uri`)
  let jwksUri
  try {
    jwksUri = new URL(doc.jwks_uri)
  } catch {
    throw jwksError('ERR_AUTH_SHIELD_JWKS_DISCOVERY', `the jwks_uri of ${issuer} is not a URL`)
  }
  if (!allowedJwksUri(jwksUri, issuerUrl)) {
    throw jwksError('ERR_AUTH_SHIELD_JWKS_DISCOVERY', `the jwks_uri of ${issuer} must be https: (http: only on loopback for a loopback issuer)`)
  }
  return jwksUri
}

function allowedJwksUri(jwksUri, issuerUrl) {
  return jwksUri.protocol === 'https:' || (isLoopback(jwksUri) && isLoopback(issuerUrl))
}

/** A configured `jwksUri` (discovery skipped), under the rule discovered ones follow. */
function readJwksUri(value, issuerUrl) {
  let url
  try {
    url = new URL(value)
  } catch {
    throw typeError(`a trusted issuer's jwksUri is not a valid URL: ${JSON.stringify(String(value)).slice(0, 256)}`)
  }
  if (!allowedJwksUri(url, issuerUrl)) throw typeError(`a trusted issuer's jwksUri must be https: (http: only on loopback for a loopback issuer)`)
  return url
}

module.exports = { readIssuer, discoverJwksUri, metadataUrls, readJwksUri }
