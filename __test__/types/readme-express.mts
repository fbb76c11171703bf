// The README's Express example, as written there (keep the two in step): it must compile under
// strict and exactOptionalPropertyTypes with no cast. Type-checked only, never run.
import express from 'express'
import { Authenticator, hashPassword, verifyPassword } from 'auth-shield'
import authShield from 'auth-shield/express'

function requiredEnv(name: string): string {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set`)
  return value
}

const auth = new Authenticator({
  accessSecret: requiredEnv('ACCESS_SECRET'), // at least 32 bytes
  refreshSecret: requiredEnv('REFRESH_SECRET'), // a different one
})

// Your user table; a Map keeps the example short.
const users = new Map<string, { id: string; passwordHash: string }>()
// Unknown names are checked against this hash too, so the answer takes as long either way.
const decoyHash = await hashPassword('decoy password')

const app = express()
app.use(express.json())

app.post('/register', async (req, res) => {
  const { name, password } = req.body ?? {}
  if (typeof name !== 'string' || typeof password !== 'string' || users.has(name)) {
    res.status(400).json({ code: 'invalid_registration' })
    return
  }
  users.set(name, { id: String(users.size + 1), passwordHash: await hashPassword(password) })
  res.status(201).end()
})

app.post('/login', async (req, res) => {
  const { name, password } = req.body ?? {}
  const user = typeof name === 'string' ? users.get(name) : undefined
  const ok = await verifyPassword(user?.passwordHash ?? decoyHash, typeof password === 'string' ? password : '')
  if (!user || !ok) {
    res.status(401).json({ code: 'invalid_credentials' })
    return
  }
  res.json({
    accessToken: auth.signAccessToken({ sub: user.id }),
    refreshToken: auth.signRefreshToken({ sub: user.id }),
  })
})

app.post('/refresh', (req, res) => {
  const { refreshToken } = req.body ?? {}
  const verified = auth.verifyRefreshToken(typeof refreshToken === 'string' ? refreshToken : '')
  if (!verified.valid || verified.userId === undefined) {
    res.status(401).json({ code: verified.errorCode })
    return
  }
  // Production code also makes each refresh token single-use (store verified.jti):
  // see examples/token-api.
  res.json({
    accessToken: auth.signAccessToken({ sub: verified.userId }),
    refreshToken: auth.signRefreshToken({ sub: verified.userId }),
  })
})

// Everything under /api needs a valid access token: 401/403/429 otherwise.
app.use('/api', authShield(auth))
app.get('/api/me', (req, res) => {
  res.json({ userId: req.user?.userId, tenantId: req.tenantId, requestId: req.requestId })
})

app.listen(3000)
