'use strict'

// Request body parsing and field checks. Handlers read only the fields validated here.

const express = require('express')
const { ApiError } = require('./errors')

// Keys that reach prototypes when a parsed body is later merged or assigned into another
// object (`Object.assign`, naive deep merge). JSON.parse itself makes them plain own keys, but
// refusing them outright means no later code has to be careful.
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

/** The first forbidden key anywhere in a parsed JSON value (iterative: depth cannot overflow). */
function findForbiddenKey(value) {
  const pending = [value]
  while (pending.length > 0) {
    const current = pending.pop()
    if (current === null || typeof current !== 'object') continue
    for (const key of Object.keys(current)) {
      if (FORBIDDEN_KEYS.has(key)) return key
      pending.push(current[key])
    }
  }
  return undefined
}

/** JSON body parser with a size limit and prototype-key refusal. */
function jsonBody(limit) {
  const parse = express.json({ limit })
  return (req, res, next) =>
    parse(req, res, (err) => {
      if (err) return next(err)
      const key = findForbiddenKey(req.body)
      if (key !== undefined) return next(new ApiError(400, 'forbidden_json_key', `JSON key "${key}" is not allowed`))
      next()
    })
}

/** The parsed JSON object body, or an ApiError saying what is wrong with it. */
function objectBody(req) {
  if (!req.is('application/json')) {
    throw new ApiError(415, 'unsupported_media_type', 'Send a JSON body with Content-Type: application/json')
  }
  const body = req.body
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError(400, 'invalid_body', 'Request body must be a JSON object')
  }
  return body
}

/** Like `objectBody`, but an empty request (no body at all) counts as `{}`. */
function optionalObjectBody(req) {
  const hasBody = req.headers['content-length'] !== '0' && req.headers['content-length'] !== undefined
  if (!hasBody && req.headers['transfer-encoding'] === undefined) return {}
  return objectBody(req)
}

function stringField(body, name, { min, max, pattern, patternHint }) {
  const value = Object.hasOwn(body, name) ? body[name] : undefined
  if (value === undefined || value === null || value === '') {
    throw new ApiError(400, 'missing_field', `${name} is required`)
  }
  if (typeof value !== 'string') {
    throw new ApiError(400, 'invalid_field', `${name} must be a string`)
  }
  if (value.length < min || value.length > max) {
    throw new ApiError(400, 'invalid_field', `${name} must be ${min} to ${max} characters long`)
  }
  if (pattern && !pattern.test(value)) {
    throw new ApiError(400, 'invalid_field', `${name} ${patternHint}`)
  }
  return value
}

const USER_NAME = {
  min: 3,
  max: 64,
  pattern: /^[A-Za-z0-9][A-Za-z0-9._@-]*$/,
  patternHint: 'may contain letters, digits and . _ @ - and must start with a letter or digit',
}
// Argon2 input is capped by the helper at 4096 bytes; 1024 characters stays under it in UTF-8.
const NEW_PASSWORD = { min: 8, max: 1024 }
const ANY_PASSWORD = { min: 1, max: 1024 }

/** `{ UserName, Password }` for registration: the password policy applies. */
function registration(body) {
  return {
    userName: stringField(body, 'UserName', USER_NAME),
    password: stringField(body, 'Password', NEW_PASSWORD),
  }
}

/** `{ UserName, Password }` for login: shape only, so the policy is not revealed per user. */
function login(body) {
  return {
    userName: stringField(body, 'UserName', { min: 1, max: 64 }),
    password: stringField(body, 'Password', ANY_PASSWORD),
  }
}

const refreshRequest = (body) => ({
  refreshToken: stringField(body, 'refreshToken', { min: 1, max: 8192 }),
})

/** Optional `{ name }` label for a new API key. */
function apiKeyRequest(body) {
  if (!Object.hasOwn(body, 'name') || body.name === undefined) return { name: 'default' }
  return {
    name: stringField(body, 'name', {
      min: 1,
      max: 64,
      pattern: /^[\w .-]+$/,
      patternHint: 'may contain letters, digits, spaces and _ . -',
    }),
  }
}

const otpCode = (body) => ({
  code: stringField(body, 'code', { min: 4, max: 10, pattern: /^\d+$/, patternHint: 'must be digits' }),
})

module.exports = {
  jsonBody,
  objectBody,
  optionalObjectBody,
  registration,
  login,
  refreshRequest,
  apiKeyRequest,
  otpCode,
}
