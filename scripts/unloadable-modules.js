'use strict'
// Preloaded (node -r) by scripts/test-arm64.sh only: makes the npm packages named in
// AUTH_SHIELD_UNLOADABLE ("name: reason", several separated by ";") fail to load with that
// reason, as they would on a machine without a usable build. Used for a package whose arm64
// native binary crashes the whole emulated process when loaded (a crash no try/catch can turn
// into the test's own "not loadable" skip).
const Module = require('node:module')
const blocked = new Map(
  (process.env.AUTH_SHIELD_UNLOADABLE || '')
    .split(';')
    .map((entry) => entry.split(/:\s*/))
    .filter(([name]) => name)
    .map(([name, ...reason]) => [name.trim(), reason.join(': ')]),
)
const load = Module._load
Module._load = function loadUnlessBlocked(request, ...rest) {
  if (blocked.has(request)) {
    throw Object.assign(new Error(`${request} is not loadable here: ${blocked.get(request)}`), { code: 'MODULE_NOT_FOUND' })
  }
  return load.call(this, request, ...rest)
}
