'use strict'

// Stream replies as node-redis (RESP2 arrays or RESP3 maps) and ioredis give them, read into one
// shape for the revocation feed (lib/store/revocations.js).

/** Stream ids compared as numbers (`ms-seq`). */
function idLess(a, b) {
  const [am, as] = a.split('-').map(BigInt)
  const [bm, bs] = b.split('-').map(BigInt)
  return am < bm || (am === bm && as < bs)
}

/**
 * The entries of an XREAD reply for one stream, whatever shape the client gives it: RESP2
 * `[[name, entries]]`, ioredis' `[name, entries]`, or node-redis' RESP3 map `{ name: entries }`.
 */
function streamEntries(reply) {
  if (reply === null || reply === undefined) return []
  if (reply instanceof Map) return [...reply.values()][0] ?? []
  if (!Array.isArray(reply)) return Object.values(reply)[0] ?? []
  if (Array.isArray(reply[0])) return reply[0][1] ?? []
  return reply[1] ?? []
}

/** An entry's fields, from a flat `[f, v, …]` list or a map. */
function fieldsOf(fields) {
  const f = {}
  if (Array.isArray(fields)) {
    for (let i = 0; i < fields.length; i += 2) f[String(fields[i])] = String(fields[i + 1])
  } else if (fields instanceof Map) {
    for (const [k, v] of fields) f[String(k)] = String(v)
  } else if (fields) {
    for (const k of Object.keys(fields)) f[k] = String(fields[k])
  }
  return f
}

module.exports = { idLess, streamEntries, fieldsOf }
