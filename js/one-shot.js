'use strict'

// authenticateRequest(...): the one-shot form, and the table behind Authenticator.shared. Cores
// are kept by their settings, so an equal config reuses prepared keys, rate-limit buckets and
// revocations (src/binding/one_shot.rs).
//
// The table is never emptied, in whole or in part: it holds security state (an exhausted
// bucket, a revoked token) that no other place keeps, and forgetting it would let 64 other
// configs, which a client may be able to influence (per-tenant audiences), reset a limit or
// un-revoke a token. It is bounded instead: past MAX_SHARED_CONFIGS distinct settings a new one
// is refused (ERR_AUTH_SHIELD_CONFIG_LIMIT); the configs already kept go on working.

const { readSettings, fingerprint } = require('./config')
const { Core } = require('./authenticator')
const { LIMITS, message } = require('../contract')

// Distinct settings kept (a process normally has one): each holds its own buckets, debt
// sketch and revocations, so the bound keeps memory bounded (docs/api.md).
const MAX_SHARED_CONFIGS = LIMITS.maxSharedConfigs
const cores = new Map()

/** The refusal of one more distinct config (contract/messages.json `sharedConfigLimit`). */
function configLimit() {
  const err = new RangeError(message('sharedConfigLimit', { max: MAX_SHARED_CONFIGS }))
  err.code = 'ERR_AUTH_SHIELD_CONFIG_LIMIT'
  return err
}

/** The core shared by every caller with settings equal to `config`'s (validated here). */
function sharedCore(config) {
  const settings = readSettings(config)
  const key = fingerprint(settings)
  let core = cores.get(key)
  if (core === undefined) {
    if (cores.size >= MAX_SHARED_CONFIGS) throw configLimit()
    core = new Core(settings)
    cores.set(key, core)
  }
  return core
}

/** Same chain and result as `Authenticator#authenticate` (`sender` its 4th argument), configured per call. */
function authenticateRequest(authorization, tenantHeader, host, config, sender) {
  return sharedCore(config).authenticate(authorization, tenantHeader, host, sender)
}

module.exports = { authenticateRequest, sharedCore, MAX_SHARED_CONFIGS }
