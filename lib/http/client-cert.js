'use strict'

// Where the adapters find the client certificate for certificate-bound tokens (RFC 8705 §3;
// the check itself is the engines': src/cert_binding.rs, js/cert-binding.js). Built once per
// middleware, and only when the authenticator checks bound tokens: otherwise no request pays
// for reading a certificate or hashing it.
//
// - By default: the TLS socket's peer certificate, when Node verified its chain against the
//   server's `ca` (`socket.authorized`), or any presented certificate with
//   `acceptUnverifiedClientCertificates` (RFC 8705 §2.2 self-signed certificates: the token's
//   binding is then the only proof, and it is enough, since the TLS handshake proved the
//   client holds the certificate's private key).
// - `clientCertificateHeader`: behind a TLS-terminating proxy, the header in which it passes
//   the certificate (RFC 9440 `Client-Cert`: `:` base64 DER `:`). Never read unless named: a
//   client could otherwise send any certificate's bytes, which proves nothing. Name it only
//   when the proxy always removes or overwrites that header from clients.

const { createHash } = require('node:crypto')
const { typeError } = require('../../base/error')
const { headerValue } = require('./token-source')

/** base64url (no padding) of the SHA-256 of a DER certificate (RFC 8705 §3.1). */
function thumbprintOf(der) {
  return createHash('sha256').update(der).digest('base64url')
}

// RFC 9110 §5.1 field names (a token), lowercase as Node gives them.
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/
// RFC 9440 §2.1: a Structured Field byte sequence, base64 (RFC 4648 §4) between colons.
const BYTE_SEQUENCE = /^:((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?):$/

/** The `clientCertificateHeader` option, checked. */
function readHeaderOption(value) {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string' || !FIELD_NAME.test(value) || value === 'authorization' || value === 'host') {
    throw typeError('options.clientCertificateHeader must be a lowercase header name (such as client-cert)')
  }
  return value
}

/** The sender context of an RFC 9440 `Client-Cert` value, or undefined when it is not one. */
function fromHeader(value) {
  if (typeof value !== 'string') return undefined
  const match = BYTE_SEQUENCE.exec(value.trim())
  if (match === null || match[1] === '') return undefined
  return { clientCertThumbprint: thumbprintOf(Buffer.from(match[1], 'base64')) }
}

/** The sender context of a TLS socket's peer certificate, or undefined without a usable one. */
function fromSocket(socket, acceptUnverified) {
  if (socket == null || typeof socket.getPeerCertificate !== 'function') return undefined
  if (socket.authorized !== true && !acceptUnverified) return undefined
  const cert = socket.getPeerCertificate(false)
  const raw = cert == null ? undefined : cert.raw
  if (!Buffer.isBuffer(raw) || raw.length === 0) return undefined
  return { clientCertThumbprint: thumbprintOf(raw) }
}

/**
 * `(req) => SenderContext | undefined` for a middleware, or null when `enabled` is false (the
 * authenticator does not check bound tokens). `req` is what the adapter hands the decision:
 * Express's request, Fastify's request and Koa's context all have `socket` and `headers`.
 */
function clientCertReader(options, enabled) {
  const header = readHeaderOption(options.clientCertificateHeader)
  if (!enabled) return null
  if (header !== undefined) {
    return (req) => fromHeader(headerValue((req.headers || {})[header]))
  }
  const acceptUnverified = options.acceptUnverifiedClientCertificates === true
  return (req) => fromSocket(req.socket, acceptUnverified)
}

/**
 * The sender context of a certificate the caller read itself (the Fetch adapter has no
 * socket): DER bytes (a Buffer or Uint8Array) or a node:crypto X509Certificate.
 */
function fromCertificate(certificate, name) {
  if (certificate === undefined || certificate === null) return undefined
  const der = certificate instanceof Uint8Array ? certificate : certificate != null && certificate.raw instanceof Uint8Array ? certificate.raw : undefined
  if (der === undefined) throw typeError(`${name} must be DER bytes (a Buffer or Uint8Array) or an X509Certificate`)
  if (der.length === 0) return undefined
  return { clientCertThumbprint: thumbprintOf(der) }
}

module.exports = { clientCertReader, fromCertificate, thumbprintOf }
