'use strict'

// The store-facing functions of an authenticator (base/store-seam.js STORE_SEAM), bound to
// it under their old method names, for tests that drive a shared limit or a revocation feed by
// hand as a store does.

const { storeSeam } = require('../../base/store-seam.js')

function plumbing(authenticator) {
  const seam = storeSeam(authenticator)
  if (seam === undefined) throw new TypeError('not an auth-shield Authenticator')
  return {
    enableSharedLimit: (...args) => seam.enableSharedLimit(authenticator, ...args),
    takeLeaseRequests: () => seam.takeLeaseRequests(authenticator),
    grantLease: (...args) => seam.grantLease(authenticator, ...args),
    get sharedLimitKeys() {
      return seam.sharedLimitKeys(authenticator)
    },
    setRevocationUnavailable: (...args) => seam.setRevocationUnavailable(authenticator, ...args),
  }
}

module.exports = { plumbing }
