'use strict'

// Test support: start a server on loopback port 0 and make requests to it.

const http = require('node:http')

/** Listens on 127.0.0.1:0; resolves to { base, close }. */
function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      resolve({
        base: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(done)
          }),
      })
    })
  })
}

/**
 * GET `url` with `headers`; { status, headers, body, json }. fetch() for ordinary requests;
 * node:http when a Host header must be sent (fetch always writes its own).
 */
async function get(url, headers = {}) {
  if (headers.host === undefined) {
    const res = await fetch(url, { headers })
    const body = await res.text()
    return { status: res.status, headers: Object.fromEntries(res.headers), body, json: parse(body) }
  }
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body, json: parse(body) }))
    })
    req.on('error', reject)
  })
}

function parse(body) {
  try {
    return JSON.parse(body)
  } catch {
    return undefined
  }
}

/**
 * Any method and headers over node:http, on a fresh connection:
 * { status, headers, body, json } (json undefined when the body is not JSON).
 */
function request(url, { method = 'GET', headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (body += chunk))
      res.on('end', () => {
        let json
        try {
          json = JSON.parse(body)
        } catch {}
        resolve({ status: res.statusCode, headers: res.headers, body, json })
      })
    })
    req.on('error', reject)
    req.end()
  })
}

/** A proxy's forward: `req` to `upstream` (a URL) at `path` with `headers`, the answer piped to `res` (502 when unreachable). */
function forward(req, res, upstream, path, headers) {
  const up = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path, headers, agent: false }, (answer) => {
    res.writeHead(answer.statusCode, answer.headers)
    answer.pipe(res)
  })
  up.on('error', () => {
    res.statusCode = 502
    res.end()
  })
  req.pipe(up)
}

module.exports = { forward, listen, get, request }
