'use strict'

// The htu comparison of RFC 9449 §4.3, as src/dpop/htu.rs: scheme and host lowercased, the
// default port dropped, an empty path made '/', query and fragment cut; userinfo, bytes
// outside printable ASCII and bad ports refused. Percent-encodings and dot segments are
// compared as they are.

const PRINTABLE = /^[\x21-\x7e]+$/
const DEFAULT_PORT = { http: '80', https: '443' }

/** `scheme://host[:port]/path` of an absolute http(s) URI (a string), or null. */
function normalize(uri) {
  if (typeof uri !== 'string' || !PRINTABLE.test(uri)) return null
  const colon = uri.indexOf(':')
  if (colon < 0) return null
  const scheme = uri.slice(0, colon).toLowerCase()
  const defaultPort = DEFAULT_PORT[scheme === 'http' || scheme === 'https' ? scheme : '']
  if (defaultPort === undefined || !uri.startsWith('//', colon + 1)) return null
  const rest = uri.slice(colon + 3)
  let end = rest.search(/[/?#]/)
  if (end < 0) end = rest.length
  const authority = rest.slice(0, end)
  const tail = rest.slice(end)
  if (authority.includes('@')) return null
  // The port follows the last colon after any IPv6 literal's closing bracket.
  const last = authority.lastIndexOf(':')
  const hostEnd = last >= 0 && !authority.slice(last).includes(']') ? last : authority.length
  const host = authority.slice(0, hostEnd)
  const port = authority.slice(hostEnd + 1)
  if (host === '' || port.length > 5 || !/^[0-9]*$/.test(port)) return null
  let pathEnd = tail.search(/[?#]/)
  if (pathEnd < 0) pathEnd = tail.length
  const path = tail.slice(0, pathEnd)
  const shownPort = port !== '' && port !== defaultPort ? `:${port}` : ''
  return `${scheme}://${host.toLowerCase()}${shownPort}${path === '' ? '/' : path}`
}

module.exports = { normalize }
