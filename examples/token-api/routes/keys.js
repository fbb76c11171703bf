'use strict'

// API keys: an authenticated user creates one (shown once, stored as its HMAC), and machines
// call `/api/machine/*` with it instead of a JWT.

const express = require('express')
const { generateApiKey, parseApiKey, verifyApiKey } = require('auth-shield')
const { ApiError } = require('../errors')
const { optionalObjectBody, apiKeyRequest } = require('../validation')
const { requestId } = require('../request-id')

const KEY_PREFIX = 'tapi'
// The first characters of the random part identify the row; the key is then checked in constant
// time against the stored HMAC. Storing them gives away 8 of 32 random base62 characters: the
// other 24 still hold about 143 bits.
const LOOKUP_CHARS = 8
const lookupIdOf = (key) => key.slice(KEY_PREFIX.length + 1, KEY_PREFIX.length + 1 + LOOKUP_CHARS)

/** The key from `X-API-Key: <key>` or `Authorization: ApiKey <key>`, else undefined. */
function presentedKey(req) {
  const header = req.get('x-api-key')
  if (header) return header.trim()
  const authorization = req.get('authorization')
  const match = authorization && /^ApiKey +(\S+)\s*$/i.exec(authorization)
  return match ? match[1] : undefined
}

function keyRoutes({ db, secret, signedIn, jsonBody }) {
  const router = express.Router()

  router.post('/keys', signedIn, jsonBody, (req, res) => {
    const { name } = apiKeyRequest(optionalObjectBody(req))
    // A new key whose lookup id is already taken (about 1 in 10^14 per existing key) is redrawn.
    let generated
    let stored = null
    for (let attempt = 0; stored === null && attempt < 3; attempt++) {
      generated = generateApiKey({ prefix: KEY_PREFIX, secret })
      stored = db.apiKeys.create({
        userId: req.account.id,
        lookupId: lookupIdOf(generated.key),
        hash: generated.hash,
        prefix: generated.prefix,
        lastFour: generated.lastFour,
        name,
      })
    }
    if (stored === null) throw new Error('could not draw an API key with a free lookup id')
    const { id, createdAt } = stored
    res.status(201).json({
      id: String(id),
      name,
      key: generated.key,
      lastFour: generated.lastFour,
      createdAt,
      note: 'Store this key now: it is not shown again.',
    })
  })

  const requireApiKey = (req, res, next) => {
    const key = presentedKey(req)
    if (!key) throw new ApiError(401, 'missing_api_key', 'Send the key in X-API-Key or Authorization: ApiKey <key>')
    const invalid = new ApiError(401, 'invalid_api_key', 'Invalid API key')
    // Format and checksum first: typos and junk never reach the database.
    const parsed = parseApiKey(key)
    if (!parsed.valid || parsed.prefix !== KEY_PREFIX) throw invalid
    const row = db.apiKeys.findByLookup(lookupIdOf(key))
    if (!row || !verifyApiKey(row.hash, key, { secret })) throw invalid
    db.apiKeys.touch(row.id)
    req.apiKey = row
    next()
  }

  router.get('/machine/ping', requestId, requireApiKey, (req, res) => {
    res.json({ pong: true, userId: String(req.apiKey.userId), keyId: String(req.apiKey.id), keyName: req.apiKey.name })
  })

  return router
}

module.exports = { keyRoutes, presentedKey }
