'use strict'

// `#node/buffer` (package.json "imports"): Node's buffer module; bundlers take ./buffer.mjs
// (the reason is in ./crypto.js).
module.exports = require('node:buffer')
