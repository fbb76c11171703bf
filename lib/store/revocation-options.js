'use strict'

// The options of `new RevocationFeed(client, options)` (docs/revocation.md), read once by the
// one option reader (lib/options/reader.js): names, kinds, defaults and bounds are the
// `feedOptions` of contract/options.json.

const { readOptionBag } = require('../options/reader')

/** The options, checked once: unknown names, wrong types and values out of bounds throw. */
function readFeedOptions(options) {
  return readOptionBag(options, 'feedOptions')
}

module.exports = { readFeedOptions }
