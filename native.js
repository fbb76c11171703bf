'use strict'

// The package entry point. `index.js` is the loader `napi build --platform`
// regenerates on every build; it tries this platform's locally built `.node`,
// then its prebuilt package (`auth-shield-<platform>`), and when both fail it
// throws a generic "Cannot find native binding". This wrapper keeps the
// generated file untouched and turns that failure into one error that says
// which platform this is, what was tried and how to get a binary.
//
// The `module.exports = require(...)` form matters: Node's CommonJS export
// detection sees it as a re-export, so `import { Authenticator } from
// 'auth-shield'` gets named exports without a hand-kept list.

try {
  module.exports = require('./index.js')
} catch (error) {
  throw require('./load-error.js').bindingLoadError(error)
}
