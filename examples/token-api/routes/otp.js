'use strict'

// Step-up one-time codes. The code goes to the server log here; a real service would send it
// by SMS or e-mail. Codes live in this process's memory (auth-shield's OtpStore).

const express = require('express')
const { ApiError } = require('../errors')
const { objectBody, otpCode } = require('../validation')
const { throttleStepUp } = require('../throttle')

const FAILURES = {
  not_found: [400, 'otp_not_started', 'No code is pending: call /api/otp/start first'],
  expired: [401, 'otp_expired', 'The code has expired: start again'],
  mismatch: [401, 'otp_invalid', 'Wrong code'],
  too_many_attempts: [429, 'otp_too_many_attempts', 'Too many wrong codes: start again'],
}

function otpRoutes({ db, otpStore, ttlSec, signedIn, jsonBody, log, throttles }) {
  const router = express.Router()

  router.post('/start', signedIn, (req, res) => {
    const userId = String(req.account.id)
    const code = otpStore.issue(userId)
    log.info(`[otp] step-up code for user ${userId}: ${code} (valid ${ttlSec} s)`)
    res.status(202).json({ sent: true, expiresIn: ttlSec })
  })

  router.post('/verify', signedIn, jsonBody, (req, res) => {
    const { code } = otpCode(objectBody(req))
    throttleStepUp(throttles, res, req.account.id)
    const result = otpStore.verify(String(req.account.id), code)
    if (!result.valid) {
      const [status, errorCode, message] = FAILURES[result.errorCode] || FAILURES.mismatch
      throw new ApiError(status, errorCode, message)
    }
    const stepUpAt = db.users.recordStepUp(req.account.id)
    res.json({ verified: true, stepUpAt })
  })

  return router
}

module.exports = { otpRoutes }
