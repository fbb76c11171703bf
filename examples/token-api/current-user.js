'use strict'

const { ApiError } = require('./errors')

/**
 * After the auth middleware: loads the token's user into `req.account`. A valid token can
 * outlive its user (database reset with the same secrets), so a missing row is a 401, not a 500.
 */
function currentUser(db) {
  return (req, res, next) => {
    const user = db.users.findBySubject(req.user.userId)
    if (!user) throw new ApiError(401, 'unknown_user', 'The user of this token no longer exists')
    req.account = user
    next()
  }
}

module.exports = { currentUser }
