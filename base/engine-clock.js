'use strict'

// The engine's clock, for the checks the middleware makes after the engine on the same request
// (lib/http/route-requirements.js: requireAuthentication's maxAgeSec). Both engines read a fixed
// `clockTimestamp` when the config gives one (tests) and the system clock otherwise; a route's
// step-up must read the same time as the config's `maxAuthAgeSec`, or a test clock would pass a
// token there and refuse it here. Each engine's Authenticator answers ENGINE_CLOCK with its fixed
// clock or null (native.js, js/authenticator.js), a symbol only the middleware reads.

const ENGINE_CLOCK = Symbol('auth-shield engine clock')

/** The fixed clock (seconds since the epoch) of `authenticator`, or null for the system clock. */
function fixedClockOf(authenticator) {
  const fixed = authenticator === null || typeof authenticator !== 'object' ? undefined : authenticator[ENGINE_CLOCK]
  return typeof fixed === 'number' ? fixed : null
}

/** Seconds since the epoch as the engine reads them: the fixed clock, or whole system seconds. */
function engineNowSec(fixed) {
  return fixed === null ? Math.floor(Date.now() / 1000) : fixed
}

module.exports = { ENGINE_CLOCK, fixedClockOf, engineNowSec }
