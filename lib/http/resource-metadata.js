'use strict'

// OAuth 2.0 Protected Resource Metadata (RFC 9728): the document a client reads to learn which
// authorization servers issue tokens for this API, which scopes it knows and how a token is
// sent. Built once from the configuration (never from a request): the document, its JSON text
// and the URL the challenges name (`resource_metadata`, RFC 9728 §5.1).

const { typeError } = require('../../base/error')

// The options of protectedResourceMetadata(); any other name is a TypeError, as a misspelt
// option is everywhere in auth-shield.
const OPTION_NAMES = new Set(['resource', 'authorizationServers', 'scopesSupported', 'bearerMethodsSupported', 'resourceName', 'resourceDocumentation'])

// RFC 9728 §3: the well-known URI suffix.
const WELL_KNOWN = '/.well-known/oauth-protected-resource'

// RFC 6750 §2: how a bearer token may be sent; we read the header (and a cookie, not a method
// of RFC 6750).
const BEARER_METHODS = new Set(['header', 'body', 'query'])

// RFC 6749 §3.3 scope-token (as src/config.rs `is_scope_token`).
const { SCOPE_TOKEN } = require('../../contract')

/**
 * A URL of the configuration: absolute, https (http only for a loopback host, for development),
 * no fragment (RFC 9728 §2), printable ASCII once parsed. Returns its serialization.
 */
function readUrl(value, label) {
  let url
  try {
    url = new URL(value)
  } catch {
    throw typeError(`${label} must be an absolute URL`)
  }
  if (typeof value !== 'string') throw typeError(`${label} must be an absolute URL`)
  const loopback = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]'
  if (!(url.protocol === 'https:' || (url.protocol === 'http:' && loopback))) {
    throw typeError(`${label} must be an https URL (http only on a loopback host)`)
  }
  if (url.hash !== '' || value.includes('#')) throw typeError(`${label} must have no fragment`)
  if (url.username !== '' || url.password !== '') throw typeError(`${label} must have no user information`)
  return url
}

function readList(value, label, check) {
  if (value === undefined || value === null) return undefined
  const list = typeof value === 'string' ? [value] : value
  if (!Array.isArray(list) || list.length === 0) throw typeError(`${label} must be a non-empty array`)
  return Object.freeze(list.map((item, i) => check(item, `${label}[${i}]`)))
}

/**
 * RFC 9728 §3.1: the metadata URL of `resource`: the well-known suffix inserted between the
 * host and the path (a terminating slash of the path removed), the query kept.
 */
function metadataUrlOf(resource) {
  const path = resource.pathname === '/' ? '' : resource.pathname.replace(/\/$/, '')
  return `${resource.origin}${WELL_KNOWN}${path}${resource.search}`
}

/**
 * The protected-resource metadata of `options`:
 * - `resource` (required): this API's resource identifier, an https URL without fragment; the
 *   `aud` its tokens carry when the authorization server supports resource indicators (RFC 8707);
 * - `authorizationServers`: issuer identifiers of the authorization servers (RFC 8414) it trusts;
 * - `scopesSupported`: scope-tokens it uses;
 * - `bearerMethodsSupported` (default ['header']): 'header', 'body', 'query';
 * - `resourceName`, `resourceDocumentation`: shown to users.
 * Returns a frozen `{ resource, url, path, document, json }`: `url` is what the challenges name,
 * `path` where an adapter serves `json` (the path of `url`, query included).
 */
function protectedResourceMetadata(options) {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw typeError('protectedResourceMetadata takes an options object')
  for (const name of Object.keys(options)) {
    if (!OPTION_NAMES.has(name)) throw typeError(`options.${name} is not a known option`)
  }
  const o = options
  const resource = readUrl(o.resource, 'options.resource')
  const document = { resource: o.resource }
  const servers = readList(o.authorizationServers, 'options.authorizationServers', (s, label) => (readUrl(s, label), s))
  if (servers !== undefined) document.authorization_servers = servers
  const scopes = readList(o.scopesSupported, 'options.scopesSupported', (s, label) => {
    if (typeof s !== 'string' || !SCOPE_TOKEN.test(s)) throw typeError(`${label} must be a scope-token (RFC 6749 §3.3)`)
    return s
  })
  if (scopes !== undefined) document.scopes_supported = scopes
  document.bearer_methods_supported = readList(o.bearerMethodsSupported === undefined || o.bearerMethodsSupported === null ? ['header'] : o.bearerMethodsSupported, 'options.bearerMethodsSupported', (m, label) => {
    if (!BEARER_METHODS.has(m)) throw typeError(`${label} must be 'header', 'body' or 'query'`)
    return m
  })
  if (o.resourceName !== undefined && o.resourceName !== null) {
    if (typeof o.resourceName !== 'string' || o.resourceName === '') throw typeError('options.resourceName must be a non-empty string')
    document.resource_name = o.resourceName
  }
  if (o.resourceDocumentation !== undefined && o.resourceDocumentation !== null) {
    document.resource_documentation = readUrl(o.resourceDocumentation, 'options.resourceDocumentation').href
  }
  const url = metadataUrlOf(resource)
  const parsed = new URL(url)
  return Object.freeze({
    resource: o.resource,
    url,
    path: `${parsed.pathname}${parsed.search}`,
    document: Object.freeze(document),
    json: JSON.stringify(document),
  })
}

/**
 * The `resourceMetadata` middleware option: a protectedResourceMetadata() result or the URL of
 * the document; the URL the challenges name.
 */
function resourceMetadataUrl(value) {
  if (value === undefined || value === null) return undefined
  if (typeof value === 'object' && typeof value.url === 'string' && typeof value.json === 'string') return value.url
  if (typeof value !== 'string') throw typeError('options.resourceMetadata must be a URL or a protectedResourceMetadata() result')
  return readUrl(value, 'options.resourceMetadata').href
}

const CONTENT_TYPE = 'application/json'

// The route handler each adapter gives the document (`meta.handler`), serving `meta.json`.
const HANDLERS = {
  // Express and node:http: (req, res).
  node: (meta) =>
    function protectedResourceMetadataHandler(req, res) {
      res.statusCode = 200
      res.setHeader('Content-Type', CONTENT_TYPE)
      res.setHeader('Content-Length', Buffer.byteLength(meta.json))
      res.end(meta.json)
    },
  fastify: (meta) =>
    function protectedResourceMetadataHandler(request, reply) {
      return reply.code(200).header('content-type', CONTENT_TYPE).send(meta.json)
    },
  koa: (meta) =>
    function protectedResourceMetadataHandler(ctx) {
      ctx.status = 200
      ctx.type = CONTENT_TYPE
      ctx.body = meta.json
    },
  fetch: (meta) =>
    function protectedResourceMetadataHandler() {
      return new Response(meta.json, { status: 200, headers: { 'content-type': CONTENT_TYPE } })
    },
}

/** protectedResourceMetadata() for an adapter: the same frozen object, with its `handler`. */
function metadataFor(framework) {
  return function protectedResourceMetadataOf(options) {
    const meta = protectedResourceMetadata(options)
    return Object.freeze({ ...meta, handler: HANDLERS[framework](meta) })
  }
}

module.exports = { protectedResourceMetadata, resourceMetadataUrl, metadataUrlOf, metadataFor, WELL_KNOWN }
