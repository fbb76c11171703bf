'use strict'

// authenticateRequest(...): the one-shot form, configured per call. It takes its core from the
// table behind Authenticator.shared (js/authenticator.js `sharedCore`), so an equal config
// reuses prepared keys, rate-limit buckets and revocations, and both forms share one bound
// (src/binding/one_shot.rs).

const { sharedCore } = require('./authenticator')

/** Same chain and result as `Authenticator#authenticate` (`sender` its 4th argument), configured per call. */
function authenticateRequest(authorization, tenantHeader, host, config, sender) {
  return sharedCore(config).authenticate(authorization, tenantHeader, host, sender)
}

module.exports = { authenticateRequest }
