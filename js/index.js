'use strict'

// `require('auth-shield/js')`: the pure-JS engine, with the native package's auth API.

const { Authenticator } = require('./authenticator')
const { authenticateRequest } = require('./one-shot')
const { resolveTenant } = require('./resolve-tenant')

module.exports = { Authenticator, authenticateRequest, resolveTenant }
module.exports.RateLimiter = require('./rate-limit').PublicRateLimiter
