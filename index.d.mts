// Types of the ESM entry point (index.mjs): the same named exports as the
// CommonJS entry, plus the whole binding as the default export.
export * from './index.js'
import * as binding from './index.js'
export default binding
