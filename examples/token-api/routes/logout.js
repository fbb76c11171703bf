'use strict'

// Logging out: revoking tokens before they expire (auth-shield revokeToken / revokeSubject,
// docs/revocation.md). Both routes need a valid access token; the deny list is checked by the
// auth middleware in the same native call as the signature, so a revoked token is refused with
// 401 token_revoked on every later request. With a revocation feed attached (REDIS_URL), the
// revoke calls return a Promise that never rejects: 'delivered' once Redis has the revocation,
// 'queued' while Redis is away (enforced here, delivered when it is back); awaiting works
// either way.

const { ApiError } = require('../errors')

/** The bearer token of a request the middleware already accepted. */
function presentedToken(req) {
  return req.get('authorization').trim().slice('bearer'.length).trim()
}

function logoutRoutes({ authenticator, signedIn, jsonBody }) {
  const logout = async (req, res) => {
    // The refresh token of the same login, when the client sends it, goes with it. Checked
    // first: a bad request revokes nothing.
    const refreshToken = req.body && typeof req.body === 'object' ? req.body.refreshToken : undefined
    if (refreshToken !== undefined && typeof refreshToken !== 'string') {
      throw new ApiError(400, 'invalid_field', 'refreshToken must be a string')
    }
    const access = authenticator.verifyAccessToken(presentedToken(req))
    await authenticator.revokeToken(access.jti, access.expiresAtSec)
    if (refreshToken !== undefined) {
      const refresh = authenticator.verifyRefreshToken(refreshToken)
      if (refresh.valid && refresh.userId === access.userId) await authenticator.revokeToken(refresh.jti, refresh.expiresAtSec)
    }
    res.status(204).end()
  }

  const logoutAll = async (req, res) => {
    // Every access and refresh token of this user issued up to now, this one included; a login
    // right after is accepted (docs/revocation.md).
    await authenticator.revokeSubject(req.user.userId)
    res.status(204).end()
  }

  return [
    ['/api/auth/logout', [...signedIn, jsonBody, logout]],
    ['/api/auth/logout-all', [...signedIn, logoutAll]],
  ]
}

module.exports = { logoutRoutes }
