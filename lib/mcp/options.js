'use strict'

// The options of `auth-shield/mcp`, read once when a protection is made. An MCP server is a
// resource server like any other (the MCP authorization specification builds on RFC 9728, RFC
// 8707 and RFC 6750), so the options only say which parts of the ordinary configuration it
// fixes: the audience is the server's canonical URL, the scopes every request needs are the
// config's `requiredScope`, the metadata document names the authorization servers, and the key
// source is whatever the caller gives (trusted issuers, a key set, keys in the config).

const { typeError } = require('../../base/error')
const { SCOPE_TOKEN } = require('../../contract')
const { createTrustedIssuers } = require('../jwks/issuers')

const OPTION_NAMES = new Set(['resource', 'issuers', 'issuer', 'jwks', 'scopes', 'toolScopes', 'scopesSupported', 'authorizationServers', 'resourceName', 'resourceDocumentation', 'config', 'options'])

// What the protection sets itself: given in `config` or `options`, it would contradict it.
const FIXED_CONFIG = new Set(['audience', 'requiredScope'])
const FIXED_OPTIONS = new Set(['jwks', 'resourceMetadata', 'requestProperty'])

function plainObject(value, label) {
  if (value === undefined || value === null) return {}
  if (typeof value !== 'object' || Array.isArray(value)) throw typeError(`${label} must be an object`)
  return value
}

/** A scope list: a scope-token or an array of them (RFC 6749 §3.3), without repeats. */
function scopeList(value, label) {
  if (value === undefined || value === null) return Object.freeze([])
  const list = typeof value === 'string' ? [value] : value
  if (!Array.isArray(list)) throw typeError(`${label} must be a scope or an array of scopes`)
  for (const s of list) {
    if (typeof s !== 'string' || !SCOPE_TOKEN.test(s)) throw typeError(`${label}: each scope must be printable ASCII without spaces, quotes or backslashes (RFC 6749 §3.3 scope-tokens)`)
  }
  return Object.freeze([...new Set(list)])
}

/**
 * `{ toolName: scopes }` → a frozen Map of tool name → the scopes a call of it needs: the
 * server's `scopes` first, then the tool's own, so the challenge of a refused call names every
 * scope the call needs (the existing and the new, as the MCP specification recommends for step-up)
 * and is the same whatever token was presented.
 */
function toolScopeMap(value, base) {
  const map = new Map()
  for (const [tool, scopes] of Object.entries(plainObject(value, 'options.toolScopes'))) {
    const own = scopeList(scopes, `options.toolScopes[${JSON.stringify(tool)}]`)
    if (own.length === 0) throw typeError(`options.toolScopes[${JSON.stringify(tool)}] needs at least one scope`)
    map.set(tool, Object.freeze([...new Set([...base, ...own])]))
  }
  return map
}

/** `scopes` and every tool's, each once, in that order; undefined when there are none. */
function allScopes(scopes, toolScopes) {
  const all = new Set(scopes)
  for (const list of toolScopes.values()) for (const s of list) all.add(s)
  return all.size === 0 ? undefined : [...all]
}

/** The issuer identifiers named by `issuers` (strings or `{ issuer }` objects). */
function issuerIds(issuers) {
  return issuers.map((entry) => (typeof entry === 'string' ? entry : entry !== null && typeof entry === 'object' ? entry.issuer : undefined))
}

/**
 * The options of an MCP protection, read: `{ resource, config, options, metadataOptions,
 * toolScopes, owned }`. `config` is the Authenticator config (audience = resource,
 * requiredScope = scopes), `options` the middleware options without the resource metadata
 * (each adapter adds its own document), `owned` the trusted-issuers registry made here (closed
 * by the protection's `close()`), or null.
 */
function readMcpOptions(given) {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw typeError('auth-shield/mcp takes an options object')
  for (const name of Object.keys(given)) {
    if (!OPTION_NAMES.has(name)) throw typeError(`options.${name} is not a known option of auth-shield/mcp`)
  }
  if (typeof given.resource !== 'string') throw typeError("options.resource must be the MCP server's canonical URL (RFC 8707 §2), e.g. 'https://mcp.example.com/mcp'")
  const resource = given.resource
  const extraConfig = plainObject(given.config, 'options.config')
  const extraOptions = plainObject(given.options, 'options.options')
  for (const name of Object.keys(extraConfig)) {
    if (FIXED_CONFIG.has(name)) throw typeError(`options.config.${name} is set by auth-shield/mcp: ${name === 'audience' ? 'the audience is options.resource' : 'give the scopes as options.scopes'}`)
  }
  for (const name of Object.keys(extraOptions)) {
    if (FIXED_OPTIONS.has(name)) throw typeError(`options.options.${name} is set by auth-shield/mcp${name === 'jwks' ? ': give the key source as options.jwks or options.issuers' : ''}`)
  }
  const scopes = scopeList(given.scopes, 'options.scopes')
  const toolScopes = toolScopeMap(given.toolScopes, scopes)

  // The key source: trusted issuers by identifier (discovery), a key source, or the config's own keys.
  const sources = ['issuers', 'jwks'].filter((name) => given[name] !== undefined && given[name] !== null)
  if (sources.length > 1) throw typeError('options.issuers and options.jwks are two key sources: give one')
  let owned = null
  let jwks
  let servers = given.authorizationServers
  if (sources[0] === 'issuers') {
    if (!Array.isArray(given.issuers) || given.issuers.length === 0) throw typeError('options.issuers must be a non-empty array of issuer identifiers (or { issuer, … } objects)')
    if (given.issuer !== undefined) throw typeError('options.issuer is for options.jwks: with options.issuers the list is the issuers')
    owned = createTrustedIssuers(given.issuers)
    jwks = owned
    if (servers === undefined) servers = issuerIds(given.issuers)
  } else if (sources[0] === 'jwks') {
    jwks = given.jwks
    if (servers === undefined && typeof given.issuer === 'string') servers = [given.issuer]
    if (servers === undefined && jwks !== null && typeof jwks === 'object' && Array.isArray(jwks.issuers)) servers = [...jwks.issuers]
  } else if (servers === undefined && typeof extraConfig.issuer === 'string') {
    servers = [extraConfig.issuer]
  } else if (servers === undefined && Array.isArray(extraConfig.issuers)) {
    // The engine's own `issuers` registry, keys given inline.
    servers = issuerIds(extraConfig.issuers)
  }
  if (servers === undefined) {
    if (owned !== null) owned.close()
    throw typeError('options.authorizationServers: name the authorization servers MCP clients should ask for tokens (RFC 9728 §2), or give options.issuers')
  }

  const config = { ...extraConfig, audience: resource }
  if (typeof given.issuer === 'string') config.issuer = given.issuer
  if (scopes.length > 0) config.requiredScope = [...scopes]
  // The 401 challenges name `scopes` (the MCP specification's SHOULD): what a client asks for first.
  const options = { challengeScope: true, ...extraOptions }
  if (jwks !== undefined) options.jwks = jwks
  const metadataOptions = {
    resource,
    authorizationServers: servers,
    // Every scope the server uses (RFC 9728 §2): `scopes`, then each tool's. A client asks first
    // for what the 401 challenge names (`scopes`, challengeScope) and for a tool's scope when a
    // call of it is refused (step-up); only when the challenge names none does it take this list.
    scopesSupported: given.scopesSupported === undefined ? allScopes(scopes, toolScopes) : given.scopesSupported,
    resourceName: given.resourceName,
    resourceDocumentation: given.resourceDocumentation,
  }
  return { resource, config, options, metadataOptions, toolScopes, owned }
}

module.exports = { readMcpOptions }
