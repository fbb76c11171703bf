'use strict'

// `#node/crypto` (package.json "imports") for Node, Bun and Deno: Node's crypto module.
// Bundlers that target workers (the `module`, `worker`, `workerd` and `browser` conditions:
// esbuild's platforms node and browser, wrangler, Vite) take ./crypto.mjs instead, an ES module
// whose `import` they keep as an import; a bundled `require` of a built-in would become esbuild's
// `__require`, which throws "Dynamic require of "node:crypto" is not supported" where there is no
// `require` (workerd, Deno Deploy, any ESM-only host).
module.exports = require('node:crypto')
