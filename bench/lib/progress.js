'use strict'
// One self-overwriting status line on stderr (plain lines when stderr is not a terminal),
// so stdout stays a clean report that can be redirected.

const started = Date.now()
let lastPlain = ''

function progress(text) {
  const line = `[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${text}`
  if (process.stderr.isTTY) {
    process.stderr.write(`\r\x1b[2K${line.slice(0, process.stderr.columns - 1 || 120)}`)
  } else if (text.split(':')[0] !== lastPlain) {
    lastPlain = text.split(':')[0]
    process.stderr.write(`${line}\n`)
  }
}

function progressDone() {
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[2K')
}

module.exports = { progress, progressDone }
