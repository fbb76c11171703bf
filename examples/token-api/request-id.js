'use strict'

const crypto = require('node:crypto')

/**
 * Gives routes outside the auth middleware the `req.requestId` (and its Express alias `req.id`)
 * and `X-Request-Id` it would have set.
 */
function requestId(req, res, next) {
  req.requestId = req.id = crypto.randomUUID()
  res.setHeader('X-Request-Id', req.requestId)
  next()
}

module.exports = { requestId }
