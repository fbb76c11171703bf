'use strict'

// An RFC 7662 answer as the claims the engine checks for a verified JWT (src/introspection.rs):
// - `active` must be a boolean (anything else: the endpoint is not answering as RFC 7662 §2.2
//   says, a failure, never a guess);
// - `iss`, when given, must be the issuer asked (else the token is refused: one endpoint never
//   vouches for another issuer's tokens); absent, it is that issuer;
// - `sub` absent with a `client_id` is the client id (a client-credentials token, as RFC 9068
//   §2.2 writes it in a JWT);
// - `jti` absent (oidc-provider leaves it out of opaque tokens, whose value is their id) is
//   `sha256:` + the base64url SHA-256 of the token, so revokeToken and the revocation feed can
//   name an opaque token without holding it;
// - `token_type` (Bearer or DPoP, the RFC 7662 member) is dropped: `type` is the claim the
//   engine reads;
// - everything else (scope, aud, exp, iat, nbf, cnf, acr, auth_time, tenant_id, ...) as given.

const { createHash } = require('node:crypto')

const DROPPED = new Set(['active', 'token_type'])

/**
 * `{ active: true, claims, exp }`, `{ active: false }`, or `{ error }` (a message) for an answer
 * that is not one.
 */
function claimsOf(answer, issuer, token) {
  if (typeof answer.active !== 'boolean') return { error: `its active member is ${answer.active === undefined ? 'missing' : 'not a boolean'}` }
  if (!answer.active) return { active: false }
  if (answer.iss !== undefined && answer.iss !== issuer) return { active: false, foreign: true }
  const claims = { iss: issuer }
  for (const name of Object.keys(answer)) if (!DROPPED.has(name) && name !== 'iss') claims[name] = answer[name]
  if (claims.sub === undefined && typeof claims.client_id === 'string') claims.sub = claims.client_id
  if (claims.jti === undefined) claims.jti = tokenJti(token)
  return { active: true, claims, exp: typeof answer.exp === 'number' ? answer.exp : undefined }
}

/** The `jti` of an introspected token its answer gave none (see above). */
function tokenJti(token) {
  return `sha256:${createHash('sha256').update(token).digest('base64url')}`
}

module.exports = { claimsOf, tokenJti }
