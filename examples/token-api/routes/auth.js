'use strict'

// Public account routes: register, log in (get-user-token), refresh.

const express = require('express')
const { ApiError } = require('../errors')
const { objectBody, registration, login, refreshRequest } = require('../validation')
const { throttleLogin } = require('../throttle')

/**
 * `{ accessToken, refreshToken, expiresIn }` for `user`; its role is read fresh from the
 * database. With `jkt` (the thumbprint of the client's DPoP key) the access token is bound to
 * that key (`cnf.jkt`, RFC 9449 §6) and `tokenType` is 'DPoP': it then works only with a proof
 * from that key, never as Bearer.
 */
function tokenPair(authenticator, user, jkt) {
  const claims = { sub: String(user.id), role: user.role }
  const pair = {
    accessToken: authenticator.signAccessToken(jkt === null ? claims : { ...claims, cnf: { jkt } }),
    refreshToken: authenticator.signRefreshToken(claims),
    expiresIn: authenticator.accessTtlSec,
  }
  if (jkt !== null) pair.tokenType = 'DPoP'
  return pair
}

// `dpopProof(req)`: the thumbprint of the request's DPoP proof key, or null without a DPoP
// header (dpop-proof.js); a bad proof throws 400 invalid_dpop_proof.
function authRoutes({ db, authenticator, passwords, jsonBody, throttles, dpopProof = () => null }) {
  const router = express.Router()

  router.post('/register', jsonBody, async (req, res) => {
    const { userName, password } = registration(objectBody(req))
    const hash = await passwords.hash(password)
    const id = db.users.create(userName, hash)
    if (id === null) throw new ApiError(409, 'user_exists', 'That user name is already taken')
    res.status(201).json({ id: String(id), userName })
  })

  router.post('/get-user-token', jsonBody, async (req, res) => {
    const { userName, password } = login(objectBody(req))
    // Before any Argon2 work: a throttled attempt costs the server nothing (429 + Retry-After).
    throttleLogin(throttles, req, res, userName)
    // The proof is checked before the password: a bad one costs no Argon2 work.
    const jkt = dpopProof(req)
    const user = db.users.findByName(userName)
    const ok = await passwords.verify(user && user.passwordHash, password)
    if (!ok) throw new ApiError(401, 'invalid_credentials', 'Invalid user name or password')
    // The only moment the plain password is at hand: upgrade hashes made with weaker costs.
    if (passwords.needsRehash(user.passwordHash)) {
      db.users.setPasswordHash(user.id, await passwords.hash(password))
    }
    res.json(tokenPair(authenticator, user, jkt))
  })

  router.post('/refresh', jsonBody, (req, res) => {
    const { refreshToken } = refreshRequest(objectBody(req))
    const jkt = dpopProof(req)
    const verified = authenticator.verifyRefreshToken(refreshToken)
    if (!verified.valid) throw new ApiError(401, verified.errorCode, verified.error)
    const user = db.users.findBySubject(verified.userId)
    if (!user) throw new ApiError(401, 'unknown_user', 'The user of this token no longer exists')
    const pair = tokenPair(authenticator, user, jkt)
    const next = authenticator.verifyRefreshToken(pair.refreshToken)
    // Rotation: each refresh token works once, and a second use revokes its whole family (see
    // database.js). The state lives in the shared database, so any worker catches a replay.
    const outcome = db.refreshTokens.exchange(verified.jti, verified.expiresAtSec, next)
    if (outcome === 'reused') {
      throw new ApiError(401, 'refresh_token_reused', 'Refresh token has already been used; its later tokens are revoked')
    }
    if (outcome === 'revoked') {
      throw new ApiError(401, 'refresh_token_revoked', 'Refresh token was revoked after a reuse; log in again')
    }
    res.json(pair)
  })

  return router
}

module.exports = { authRoutes }
