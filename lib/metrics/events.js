'use strict'

// Events that cannot flood (docs/observability.md): hooks fed from the sources' metrics()
// snapshots, read on a timer, never from the request path. Each hook is called at most once per
// source per `intervalMs` (and never while its previous call is still pending), with the counts
// since its last call: a million refused requests make at most one call per interval, whatever
// their rate. Every hook is fenced (lib/http/callback-fence.js): a throw, a rejection or a
// Promise that never settles goes to `onError` (or is dropped), never crashes the process, and
// the counts it missed are carried into the next call.

const { CallbackFence } = require('../http/callback-fence')
const { readAllSources, readSnapshot, readAuthenticatorSnapshot } = require('./instruments')
const { typeError, rangeError } = require('../../base/error')
const { message } = require('../../contract')

const HOOKS = ['onAuthFailure', 'onRateLimited', 'onStoreOutage', 'onStoreRecovery', 'onStaleKeys', 'onError']
const MIN_INTERVAL_MS = 100
const MAX_INTERVAL_MS = 3_600_000
const DEFAULT_INTERVAL_MS = 1000

/**
 * Watches `{ authenticators, stores, jwks }` and calls `hooks`:
 * - `onAuthFailure({ authenticator, failed, failures })`: refusals other than rate limiting
 *   since the last call, by code;
 * - `onRateLimited({ authenticator, limited, pending })`;
 * - `onStoreOutage({ store })` / `onStoreRecovery({ store, fallbackSeconds })`: on each change;
 * - `onStaleKeys({ jwks, issuer?, keyAgeSeconds, keysAvailable, failures })`: when a key set
 *   becomes older than `staleKeysAfterSeconds` or unavailable (once per episode; with trusted
 *   issuers, per issuer, named by `issuer`);
 * - `onError(err)`: what a hook threw or rejected with.
 * Options: `intervalMs` (100 to 3600000, default 1000), `staleKeysAfterSeconds` (default 3600),
 * `callbackTimeoutMs`. Returns `{ check(), close() }`; `check()` runs a round now (tests, shutdown).
 */
function watchMetrics(sources, hooks, options = {}) {
  const lists = readAllSources(sources)
  if (hooks === null || typeof hooks !== 'object') throw typeError(message('mustBeObject', { name: 'hooks' }))
  for (const name of Object.keys(hooks)) {
    if (!HOOKS.includes(name)) throw typeError(`hooks.${name} is not a known hook (${HOOKS.join(', ')})`)
    if (hooks[name] !== undefined && typeof hooks[name] !== 'function') throw typeError(`hooks.${name} must be a function`)
  }
  if (options === null || typeof options !== 'object') throw typeError(message('mustBeObject', { name: 'options' }))
  const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS
  if (!Number.isInteger(intervalMs) || intervalMs < MIN_INTERVAL_MS || intervalMs > MAX_INTERVAL_MS) {
    throw rangeError(`options.intervalMs must be a whole number of milliseconds from ${MIN_INTERVAL_MS} to ${MAX_INTERVAL_MS}`)
  }
  const staleAfter = options.staleKeysAfterSeconds ?? 3600
  if (typeof staleAfter !== 'number' || !(staleAfter > 0 && staleAfter <= 1e9)) {
    throw rangeError('options.staleKeysAfterSeconds must be a number of seconds from above 0 to 1e9')
  }
  const fence = new CallbackFence(options.callbackTimeoutMs)
  const report = (err) => {
    if (typeof hooks.onError !== 'function') return
    try {
      const answer = hooks.onError(err)
      if (answer !== null && typeof answer === 'object' && typeof answer.then === 'function') Promise.resolve(answer).catch(() => {})
    } catch {}
  }
  // Per hook and source: a call in flight blocks the next one (its counts wait).
  const busy = new Set()
  const call = (hook, key, event) => {
    const fn = hooks[hook]
    if (typeof fn !== 'function' || busy.has(`${hook}\0${key}`)) return false
    const id = `${hook}\0${key}`
    let answer
    try {
      answer = fence.wrap(`hooks.${hook}`, fn)(event)
    } catch (err) {
      report(err)
      return true
    }
    if (answer instanceof Promise) {
      busy.add(id)
      answer.then(
        () => busy.delete(id),
        (err) => {
          busy.delete(id)
          report(err)
        },
      )
    }
    return true
  }

  // What each hook was last told, per source.
  const told = new Map()
  const state = (key, fresh) => {
    if (!told.has(key)) told.set(key, fresh)
    return told.get(key)
  }

  function check() {
    for (const [name, auth] of lists.authenticators) {
      const m = readAuthenticatorSnapshot(auth)
      if (m === null) continue
      const last = state(`a\0${name}`, { failures: {}, limited: 0, pending: 0 })
      const failures = {}
      let failed = 0
      for (const [code, n] of Object.entries(m.authentication.failures)) {
        if (code === 'rate_limited' || code === 'rate_limit_pending') continue
        const delta = n - (last.failures[code] ?? 0)
        if (delta > 0) {
          failures[code] = delta
          failed += delta
        }
      }
      if (failed > 0 && call('onAuthFailure', name, { authenticator: name, failed, failures })) {
        for (const code of Object.keys(failures)) last.failures[code] = m.authentication.failures[code]
      }
      const limited = m.rateLimit.limited - last.limited
      const pending = m.rateLimit.pending - last.pending
      if ((limited > 0 || pending > 0) && call('onRateLimited', name, { authenticator: name, limited, pending })) {
        last.limited = m.rateLimit.limited
        last.pending = m.rateLimit.pending
      }
    }
    for (const [name, store] of lists.stores) {
      const m = readSnapshot(store)
      if (m === null) continue
      const last = state(`s\0${name}`, { fallback: false })
      if (m.fallback !== last.fallback) {
        const sent = m.fallback ? call('onStoreOutage', name, { store: name }) : call('onStoreRecovery', name, { store: name, fallbackSeconds: m.fallbackSeconds })
        // A transition nobody listens to still counts as told.
        if (sent || typeof hooks[m.fallback ? 'onStoreOutage' : 'onStoreRecovery'] !== 'function') last.fallback = m.fallback
      }
    }
    for (const [name, source] of lists.jwks) {
      const m = readSnapshot(source)
      if (m === null) continue
      // Trusted issuers: each issuer's key set is watched on its own (the event names it).
      if (m.issuers !== null && typeof m.issuers === 'object') {
        for (const issuer in m.issuers) staleKeys(name, issuer, m.issuers[issuer])
      } else {
        staleKeys(name, undefined, m)
      }
    }
  }

  function staleKeys(name, issuer, m) {
    const key = issuer === undefined ? name : `${name}\0${issuer}`
    const last = state(`j\0${key}`, { stale: false })
    const stale = !m.keysAvailable || (m.keyAgeSeconds !== null && m.keyAgeSeconds > staleAfter)
    if (stale && !last.stale) {
      const event = { jwks: name, keyAgeSeconds: m.keyAgeSeconds, keysAvailable: m.keysAvailable, failures: m.failures }
      if (issuer !== undefined) event.issuer = issuer
      if (call('onStaleKeys', key, event) || typeof hooks.onStaleKeys !== 'function') last.stale = true
    } else if (!stale) {
      last.stale = false
    }
  }

  const timer = setInterval(check, intervalMs)
  timer.unref()
  return {
    check,
    close() {
      clearInterval(timer)
    },
  }
}

module.exports = { watchMetrics, MIN_INTERVAL_MS, DEFAULT_INTERVAL_MS }
