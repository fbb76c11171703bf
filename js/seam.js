'use strict'

// What the layers (lib/, adapters/) take from the JS engine, and the only module of js/ they may
// import (docs/development.md, "Layout"; __test__/package/layers.test.js): the engine's inner
// modules stay free to change, and anything more a layer needs is added here, in one place a
// reviewer sees. Each is a getter, so a layer loads only what it reads: an app on the native
// engine never loads the JS Authenticator, and the store never loads more than the bucket.

module.exports = {
  /** The JS engine's Authenticator, when the middleware is asked for it or for shadow mode (lib/http/engine.js). */
  get Authenticator() {
    return require('./authenticator').Authenticator
  },

  /**
   * The token bucket of js/rate-limit.js: a store's local fallback while Redis is away, for
   * either engine (lib/store/attachment.js), so an outage limits as the engine's own bucket does.
   */
  get RateLimiter() {
    return require('./rate-limit').RateLimiter
  },

  /**
   * The DPoP replay cache of js/dpop/replay.js: the one cache of the decisions a secret getter
   * makes per key (lib/http/express-jwt-compat.js), so a proof is taken once whatever key it met.
   */
  get ReplayCache() {
    return require('./dpop/replay').ReplayCache
  },

  /**
   * The access-token claim rules of `config` as the JS engine reads them, for express-jwt's
   * `onExpired` (lib/http/express-jwt-compat.js), which re-checks an expired token's claims.
   */
  accessClaimRules(config) {
    const { readSettings } = require('./config')
    const { ClaimRules } = require('./jwt')
    return new ClaimRules(readSettings(config), 'access')
  },
}
