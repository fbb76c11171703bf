'use strict'
// Before anything is timed, every contender must accept the valid input and reject each
// tampered or mis-claimed one. A contender that accepted a bad token would be doing less work;
// one that rejected the good token would be timing its failure path.

async function outcome(contender, input) {
  try {
    return contender.accept(await contender.call(input)) ? 'accepted' : 'rejected'
  } catch {
    return 'rejected'
  }
}

async function sanityCheck(contenders, valid, rejects) {
  for (const c of contenders) {
    if ((await outcome(c, valid)) !== 'accepted') {
      throw new Error(`sanity check: ${c.label} does not accept the valid input`)
    }
    for (const [name, input] of Object.entries(rejects)) {
      if ((await outcome(c, input)) !== 'rejected') {
        throw new Error(`sanity check: ${c.label} accepts the ${name} input`)
      }
    }
  }
}

module.exports = { sanityCheck }
