'use strict'

// `require('auth-shield/jwks')`: a remote JWKS (an identity provider's published keys) as the
// key source of one or more Authenticators, refreshed on a schedule and on unknown `kid`s,
// kept through provider outages (docs/jwks.md).
//
//   const { createRemoteJwks } = require('auth-shield/jwks')
//   const jwks = createRemoteJwks('https://idp.example.com/.well-known/jwks.json')
//   app.use('/api', authShield({ issuer: 'https://idp.example.com/' }, { jwks }))

const { createRemoteJwks, RemoteJwks, isJwksSource } = require('./source')
const { SUPPORTED_ALGORITHMS } = require('./document')
const { createTrustedIssuers, TrustedIssuers, isTrustedIssuers, MAX_ISSUERS } = require('./issuers')

module.exports = { createRemoteJwks, RemoteJwks, isJwksSource, SUPPORTED_ALGORITHMS, createTrustedIssuers, TrustedIssuers, isTrustedIssuers, MAX_ISSUERS }
