'use strict'

// Which requests a middleware leaves alone: the `skip` / `unless` rules, in the shapes express
// users already write (express-unless: `{ path, method, ext, custom }`, paths as strings,
// RegExps or `{ url, methods }`), and CORS preflights. Every rule is checked and compiled once,
// when the middleware is made; a request only runs the compiled tests.

const { typeError } = require('../../base/error')
const { message } = require('../../contract')

const SHAPES = 'a path, a RegExp, { url, methods }, an array of them, { path, method, ext, custom }, or a function'

/**
 * `(req, path) => boolean | Promise<boolean>` for a `skip` / `unless` value, or null without
 * one. `name` is the option's name, for error messages; the application's predicates (a
 * function, `custom`) are called through `fence.predicate` (lib/http/callback-fence.js): `true`
 * (or a Promise of it, as express-unless awaits `custom`) skips, `false` authenticates, and any
 * other answer, a throw, a rejection or a Promise past callbackTimeoutMs refuses the request.
 * A caller reads the answer as `true`, `false` or a Promise: never as truthy.
 */
function compileSkip(rule, name, fence) {
  if (rule === undefined || rule === null) return null
  if (typeof rule === 'function') return fence.predicate(`options.${name}`, rule)
  if (typeof rule === 'string' || rule instanceof RegExp || Array.isArray(rule)) return compilePaths(rule, name)
  if (typeof rule !== 'object') throw typeError(`options.${name} must be ${SHAPES}`)
  if ('url' in rule) return compilePaths(rule, name)
  for (const key of Object.keys(rule)) {
    if (!RULE_KEYS.has(key)) throw typeError(`options.${name}.${key} is not a known rule (path, method, ext, custom, useOriginalUrl)`)
  }
  if (rule.useOriginalUrl !== undefined && rule.useOriginalUrl !== true) {
    throw typeError(`options.${name}.useOriginalUrl can only be true: rules match the path the client asked for`)
  }
  const tests = []
  if (rule.path !== undefined) tests.push(compilePaths(rule.path, `${name}.path`))
  if (rule.method !== undefined) {
    const methods = new Set(listOf(rule.method, `${name}.method`).map((m) => m.toUpperCase()))
    tests.push((req) => methods.has(req.method))
  }
  if (rule.ext !== undefined) {
    const exts = listOf(rule.ext, `${name}.ext`).map((e) => (e.startsWith('.') ? e : `.${e}`))
    tests.push((req, path) => exts.some((e) => path.endsWith(e)))
  }
  let custom = null
  if (rule.custom !== undefined) {
    if (typeof rule.custom !== 'function') throw typeError(`options.${name}.custom must be a function`)
    custom = fence.predicate(`options.${name}.custom`, rule.custom)
  }
  if (tests.length === 0) return custom
  // express-unless skips when any rule matches; the application's own predicate runs last.
  if (custom === null) return (req, path) => tests.some((t) => t(req, path))
  return (req, path) => tests.some((t) => t(req, path)) || custom(req, path)
}

// useOriginalUrl is express-unless's switch between req.originalUrl and req.url: the adapters
// always match the path the client asked for (originalUrl), so only `true` is accepted.
const RULE_KEYS = new Set(['path', 'method', 'ext', 'custom', 'useOriginalUrl'])

function listOf(value, name) {
  const list = Array.isArray(value) ? value : [value]
  for (const v of list) if (typeof v !== 'string') throw typeError(message('mustBeStringList', { name: `options.${name}` }))
  return list
}

/** Path rules: strings match exactly, RegExps anywhere, `{ url, methods }` for some methods. */
function compilePaths(paths, name) {
  const list = Array.isArray(paths) ? paths : [paths]
  const exact = new Set()
  const patterns = []
  const scoped = []
  for (const p of list) {
    if (typeof p === 'string') exact.add(p)
    else if (p instanceof RegExp) patterns.push(p)
    else if (p !== null && typeof p === 'object' && (typeof p.url === 'string' || p.url instanceof RegExp)) {
      const methods = p.methods ?? p.method
      const set = methods === undefined ? null : new Set(listOf(methods, `${name}.methods`).map((m) => m.toUpperCase()))
      scoped.push({ url: p.url, methods: set })
    } else throw typeError(`options.${name} must be ${SHAPES}`)
  }
  const urlMatches = (url, path) => (typeof url === 'string' ? url === path : matches(url, path))
  return (req, path) =>
    exact.has(path) ||
    patterns.some((re) => matches(re, path)) ||
    scoped.some((s) => urlMatches(s.url, path) && (s.methods === null || s.methods.has(req.method)))
}

// A global or sticky RegExp keeps lastIndex between calls; reset it so every request is tested alike.
function matches(re, path) {
  re.lastIndex = 0
  return re.test(path)
}

/**
 * A CORS preflight (Fetch standard): OPTIONS announcing the method it asks about. Browsers send
 * it without credentials, so authenticating it can only fail; the route's CORS handler answers it.
 */
function isPreflight(req) {
  return req.method === 'OPTIONS' && req.headers != null && req.headers['access-control-request-method'] !== undefined
}

/**
 * express-jwt's preflight rule (the compatible export `expressjwt`): OPTIONS whose
 * Access-Control-Request-Headers names `authorization`, the header the browser will send.
 */
function isExpressJwtPreflight(req) {
  if (req.method !== 'OPTIONS' || req.headers == null) return false
  const requested = req.headers['access-control-request-headers']
  return typeof requested === 'string' && requested.split(',').some((h) => h.trim().toLowerCase() === 'authorization')
}

module.exports = { compileSkip, isPreflight, isExpressJwtPreflight }
