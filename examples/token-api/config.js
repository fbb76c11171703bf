'use strict'

// Settings for the token API, read once from the environment.

const crypto = require('node:crypto')
const path = require('node:path')

const SECRET_NAMES = ['ACCESS_SECRET', 'REFRESH_SECRET', 'API_KEY_SECRET']

// TOKEN_SIGNING_ALG: HS256 (the default: ACCESS_SECRET signs and verifies access tokens) or an
// asymmetric algorithm: TOKEN_SIGNING_KEY (a PKCS#8 PEM private key) signs them, and its public
// half is served at /.well-known/jwks.json for other services to verify with.
const SIGNING_ALGS = ['HS256', 'EdDSA', 'ES256', 'RS256', 'PS256']

/** The signing algorithm asked for by `env`, checked. */
function signingAlgFrom(env) {
  const alg = env.TOKEN_SIGNING_ALG || 'HS256'
  if (!SIGNING_ALGS.includes(alg)) {
    throw new RangeError(`TOKEN_SIGNING_ALG must be one of ${SIGNING_ALGS.join(', ')}, got ${JSON.stringify(alg)}`)
  }
  return alg
}

/** A fresh private key for `alg`, as PKCS#8 PEM. */
function generateSigningKey(alg) {
  const [type, options] =
    alg === 'EdDSA' ? ['ed25519', {}] : alg === 'ES256' ? ['ec', { namedCurve: 'P-256' }] : ['rsa', { modulusLength: 2048 }]
  return crypto.generateKeyPairSync(type, options).privateKey.export({ type: 'pkcs8', format: 'pem' })
}

/** Returns the names of the secrets missing from `env`, after filling them with random values. */
function fillMissingSecrets(env) {
  const generated = []
  const alg = signingAlgFrom(env)
  for (const name of SECRET_NAMES) {
    if (name === 'ACCESS_SECRET' && alg !== 'HS256') continue
    if (!env[name]) {
      env[name] = crypto.randomBytes(32).toString('base64url')
      generated.push(name)
    }
  }
  if (alg !== 'HS256' && !env.TOKEN_SIGNING_KEY) {
    env.TOKEN_SIGNING_KEY = generateSigningKey(alg)
    generated.push('TOKEN_SIGNING_KEY')
  }
  return generated
}

/** The Authenticator's access-token key options: `{ accessSecret }` or `{ signingKey }`. */
function accessKeyFrom(env) {
  const alg = signingAlgFrom(env)
  if (alg === 'HS256') return { accessSecret: env.ACCESS_SECRET }
  if (!env.TOKEN_SIGNING_KEY) throw new Error(`TOKEN_SIGNING_KEY is not set (TOKEN_SIGNING_ALG=${alg})`)
  return { signingKey: { kid: env.TOKEN_SIGNING_KID || 'token-api-1', alg, privateKey: env.TOKEN_SIGNING_KEY } }
}

function numberFrom(env, name, fallback, min, max, integer = true) {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || (integer && !Number.isInteger(value)) || value < min || value > max) {
    const kind = integer ? 'an integer' : 'a number'
    throw new RangeError(`${name} must be ${kind} from ${min} to ${max}, got ${JSON.stringify(raw)}`)
  }
  return value
}
const intFrom = (env, name, fallback, min, max) => numberFrom(env, name, fallback, min, max, true)

/** BODY_LIMIT as body-parser reads it ("16kb", "1mb", bytes); refused rather than read as "no limit". */
function bodyLimitFrom(env) {
  const raw = env.BODY_LIMIT || '16kb'
  if (!/^\d{1,9}(b|kb|mb)?$/i.test(raw)) {
    throw new RangeError(`BODY_LIMIT must look like 16kb, 1mb or a byte count, got ${JSON.stringify(raw)}`)
  }
  return raw
}

/** REDIS_URL (redis:// or rediss://), or null. */
function redisUrlFrom(env) {
  const raw = env.REDIS_URL
  if (raw === undefined || raw === '') return null
  if (!/^rediss?:\/\/\S+$/.test(raw)) throw new RangeError(`REDIS_URL must be a redis:// or rediss:// URL, got ${JSON.stringify(raw)}`)
  return raw
}

/** PUBLIC_ORIGIN: the origin clients address (DPoP proofs name it), default http://localhost:PORT. */
function publicOriginFrom(env, port) {
  const raw = env.PUBLIC_ORIGIN || `http://localhost:${port}`
  if (!/^https?:\/\/[A-Za-z0-9.\-[\]:]+$/.test(raw)) throw new RangeError(`PUBLIC_ORIGIN must be an origin such as https://api.example.com, got ${JSON.stringify(raw)}`)
  return raw
}

/** Where the database lives and how new passwords are hashed: all that seeding needs. */
function loadStorageConfig(env = process.env) {
  // Argon2 costs default to the helper's own (OWASP) defaults; tests lower them through the
  // environment so the suite stays fast. Unset means "use the library default".
  const argon2 = {}
  const memoryCost = intFrom(env, 'ARGON2_MEMORY_KIB', undefined, 8, 262144)
  const timeCost = intFrom(env, 'ARGON2_TIME_COST', undefined, 1, 16)
  if (memoryCost !== undefined) argon2.memoryCost = memoryCost
  if (timeCost !== undefined) argon2.timeCost = timeCost
  return { dataDir: path.resolve(env.DATA_DIR || path.join(__dirname, 'data')), argon2 }
}

/**
 * Builds the service configuration from `env`. Secrets must already be present (see
 * `fillMissingSecrets`); the JWT secrets' length is checked by the Authenticator.
 */
function loadConfig(env = process.env) {
  const asymmetric = signingAlgFrom(env) !== 'HS256'
  for (const name of SECRET_NAMES) {
    if (!env[name] && !(asymmetric && name === 'ACCESS_SECRET')) throw new Error(`${name} is not set`)
  }
  // This one would only fail at the first POST /api/keys, so check it at start.
  if (Buffer.byteLength(env.API_KEY_SECRET) < 16) throw new RangeError('API_KEY_SECRET must be at least 16 bytes')

  const port = intFrom(env, 'PORT', 3000, 0, 65535)
  return {
    port,
    host: env.HOST || '127.0.0.1',
    publicOrigin: publicOriginFrom(env, port),
    ...loadStorageConfig(env),
    bodyLimit: bodyLimitFrom(env),
    // How long a stop waits for open requests before it exits anyway.
    shutdownTimeoutMs: intFrom(env, 'SHUTDOWN_TIMEOUT_MS', 10000, 0, 600000),
    auth: {
      ...accessKeyFrom(env),
      // Given even with TOKEN_SIGNING_KEY, on purpose: refresh tokens then stay HMAC, which the
      // services verifying access tokens with our /.well-known/jwks.json cannot verify (without
      // it the signing key would sign them too, told apart only by their type claim).
      refreshSecret: env.REFRESH_SECRET,
      issuer: 'auth-shield-token-api',
      // `acme.localhost:3000` names the tenant "acme"; set BASE_DOMAIN=example.com in production.
      baseDomain: env.BASE_DOMAIN || 'localhost',
      accessTtlSec: intFrom(env, 'ACCESS_TTL_SEC', 900, 1, 86400),
      refreshTtlSec: intFrom(env, 'REFRESH_TTL_SEC', 604800, 1, 31536000),
      rateLimitMax: intFrom(env, 'RATE_LIMIT_MAX', 100, 0, 1e9),
      rateLimitRefill: numberFrom(env, 'RATE_LIMIT_REFILL', 10, 0.001, 1e9, false),
      requireTokenType: true,
      // DPoP-bound access tokens (RFC 9449): checked with their proof wherever the middleware
      // has dpopOrigin (app.js); a bound token sent as Bearer is refused everywhere.
      dpop: true,
    },
    apiKeySecret: env.API_KEY_SECRET,
    // With REDIS_URL every worker (and every other instance on the same Redis) shares the rate
    // limits through auth-shield/redis; without it each process keeps its own.
    redisUrl: redisUrlFrom(env),
    otp: { ttlSec: intFrom(env, 'OTP_TTL_SEC', 300, 1, 86400), maxAttempts: 5 },
  }
}

module.exports = { loadConfig, loadStorageConfig, fillMissingSecrets, SECRET_NAMES }
