'use strict'

// Test support: a certificate authority, a loopback server certificate and client
// certificates, made by `openssl` in a fresh temp dir for each run (P-256 keys: fast).

const { execFileSync } = require('node:child_process')
const { createHash, X509Certificate } = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

function openssl(dir, args) {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
}

const KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']

/** A key and a certificate signed by the CA in `dir`, with `ext` (an openssl extension line). */
function signed(dir, name, cn, ext) {
  openssl(dir, ['req', ...KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`])
  fs.writeFileSync(path.join(dir, `${name}.ext`), `${ext}\n`)
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-out', `${name}.crt`, '-extfile', `${name}.ext`])
  return read(dir, name)
}

function read(dir, name) {
  const cert = fs.readFileSync(path.join(dir, `${name}.crt`), 'utf8')
  return { key: fs.readFileSync(path.join(dir, `${name}.key`), 'utf8'), cert, thumbprint: thumbprintOf(cert) }
}

/**
 * The RFC 8705 §3.1 thumbprint of a PEM certificate, from node:crypto's own SHA-256
 * fingerprint (hex with colons), not from the code under test.
 */
function thumbprintOf(pem) {
  return Buffer.from(new X509Certificate(pem).fingerprint256.replace(/:/g, ''), 'hex').toString('base64url')
}

/** The DER bytes of a PEM certificate. */
function derOf(pem) {
  return new X509Certificate(pem).raw
}

/**
 * `{ ca, server, clientA, clientB, selfSigned, dir, remove() }`: each entity `{ key, cert,
 * thumbprint }` (PEM strings); clients A and B are signed by the CA, `selfSigned` is not.
 */
function makeCertificates() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'auth-shield-mtls-'))
  openssl(dir, ['req', '-x509', ...KEY, '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=auth-shield test CA', '-days', '2'])
  const ca = read(dir, 'ca')
  const server = signed(dir, 'server', 'localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost')
  const clientA = signed(dir, 'client-a', 'client-a', 'extendedKeyUsage=clientAuth')
  const clientB = signed(dir, 'client-b', 'client-b', 'extendedKeyUsage=clientAuth')
  openssl(dir, ['req', '-x509', ...KEY, '-keyout', 'self.key', '-out', 'self.crt', '-subj', '/CN=self-signed client', '-days', '2'])
  const selfSigned = read(dir, 'self')
  assert(new Set([clientA.thumbprint, clientB.thumbprint, selfSigned.thumbprint]).size === 3)
  assert(createHash('sha256').update(derOf(clientA.cert)).digest('base64url') === clientA.thumbprint)
  return { ca, server, clientA, clientB, selfSigned, dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) }
}

function assert(ok) {
  if (!ok) throw new Error('certificate fixture check failed')
}

module.exports = { makeCertificates, thumbprintOf, derOf }
