// Types of the ESM entry of `auth-shield/js` (js/index.mjs): the same named
// exports as the CommonJS entry, plus the module as the default export.
export * from './index.js'
import * as engine from './index.js'
export default engine
