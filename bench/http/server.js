'use strict'
// Child process: one server variant on 127.0.0.1, so the load generator in the parent does
// not share this event loop. Reports its port over IPC, answers its CPU time so far (user +
// system, microseconds) when asked ('cpu'), exits when the parent disconnects.

const crypto = require('node:crypto')
const { createServer } = require('./apps')

const { framework, auth, secret, config } = JSON.parse(process.argv[2])
const secretBuffer = Buffer.from(secret)
const fx = { secret, secretBuffer, secretKeyObject: crypto.createSecretKey(secretBuffer), config }

Promise.resolve(createServer({ framework, auth }, fx)).then((server) => {
  server.keepAliveTimeout = 60_000
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
})
process.on('message', (m) => {
  const cpu = process.cpuUsage()
  if (m === 'cpu') process.send({ cpuUs: cpu.user + cpu.system })
})
process.on('disconnect', () => process.exit(0))
