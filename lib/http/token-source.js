'use strict'

// Where a middleware reads the credentials of a request: `getToken(req)` (a token, or a Promise
// of one), the Authorization header, and a `cookie` when the header is absent. The value handed
// to the engine is always an Authorization value (`Bearer <token>`), so every source goes
// through the same extraction and checks.

const { typeError } = require('../../base/error')

/** `cookie` option: a cookie name, or @fastify/jwt's `{ cookieName }`; null without one. */
function readCookieOption(cookie) {
  if (cookie === undefined || cookie === null) return null
  if (cookie !== null && typeof cookie === 'object' && !Array.isArray(cookie)) {
    if (cookie.signed === true) throw typeError('options.cookie.signed is not supported: sign the token, not the cookie')
    cookie = cookie.cookieName
  }
  // A cookie-name is an RFC 6265 token: no separators, spaces or control characters.
  if (typeof cookie !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(cookie)) {
    throw typeError('options.cookie must be a cookie name (an RFC 6265 token) or { cookieName }')
  }
  return cookie
}

/**
 * The Authorization value of a request, or a Promise of it when `getToken` returns one:
 * `getToken(req)` if given, else the header, else the cookie named `cookie`.
 */
function authorizationOf(req, getToken, cookie) {
  if (getToken !== undefined) {
    const token = getToken(req)
    if (token !== null && typeof token === 'object' && typeof token.then === 'function') return Promise.resolve(token).then(bearerOf)
    return bearerOf(token)
  }
  const header = authorizationHeader(req.headers)
  if (header !== undefined || cookie === null) return header
  return bearerOf(cookieOf(req, cookie))
}

/**
 * The Authorization header. Node's server lowercases header names; a hand-built request
 * (serverless adapters such as AWS Lambda's, tests) may spell it `Authorization` or have no
 * headers at all, which express-jwt reads too.
 */
function authorizationHeader(headers) {
  if (headers === undefined || headers === null) return undefined
  const value = headers.authorization
  return headerValue(value === undefined ? headers.Authorization : value)
}

function bearerOf(token) {
  if (token === undefined || token === null || token === '') return undefined
  if (typeof token !== 'string') throw typeError('options.getToken must return a string, null or undefined (or a Promise of one)')
  return `Bearer ${token}`
}

/** Node joins repeated headers into one string; a hand-built request may carry an array. */
function headerValue(value) {
  return Array.isArray(value) ? value.join(', ') : value
}

/**
 * The value of cookie `name`: from `req.cookies` when a cookie parser ran (cookie-parser,
 * @fastify/cookie), else from the Cookie header (RFC 6265 §5.4 `name=value` pairs split on `;`;
 * the first pair with the name wins, surrounding quotes are dropped, percent-escapes decoded).
 */
function cookieOf(req, name) {
  const parsed = req.cookies
  // Koa's `ctx.cookies` is a cookie jar (get / set), not a parsed map: the header is read then.
  if (parsed !== null && typeof parsed === 'object' && typeof parsed.get !== 'function') {
    const value = parsed[name]
    return typeof value === 'string' ? value : undefined
  }
  const header = req.headers ? headerValue(req.headers.cookie) : undefined
  if (typeof header !== 'string') return undefined
  let start = 0
  while (start < header.length) {
    let end = header.indexOf(';', start)
    if (end < 0) end = header.length
    const eq = header.indexOf('=', start)
    if (eq > start && eq < end && header.slice(start, eq).trim() === name) {
      let value = header.slice(eq + 1, end).trim()
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1)
      return decode(value)
    }
    start = end + 1
  }
  return undefined
}

function decode(value) {
  if (!value.includes('%')) return value
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

module.exports = { authorizationOf, headerValue, readCookieOption, cookieOf }
