'use strict'

// The options of `new RevocationFeed(client, options)` (docs/revocation.md), read once by the
// one option reader (js/option-reader.js): names, kinds, defaults and bounds are the
// `feedOptions` of js/schema.json.

const { readOptionBag } = require('../../js/option-reader')

/** The options, checked once: unknown names, wrong types and values out of bounds throw. */
function readFeedOptions(options) {
  return readOptionBag(options, 'feedOptions')
}

module.exports = { readFeedOptions }
