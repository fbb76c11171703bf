'use strict'

const crypto = require('node:crypto')

/** Gives routes outside the auth middleware the `req.id` and `X-Request-Id` it would have set. */
function requestId(req, res, next) {
  req.id = crypto.randomUUID()
  res.setHeader('X-Request-Id', req.id)
  next()
}

module.exports = { requestId }
