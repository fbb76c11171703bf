// auth-shield/hono as a Hono app uses it: strict, type-checked only (the behaviour is in
// __test__/http/hono.test.js).
import { Hono } from 'hono'
import authShield, { requireScopes, requireAuthentication, type AuthShieldEnv } from 'auth-shield/hono'

const accessSecret = process.env.JWT_SECRET
if (!accessSecret) throw new Error('JWT_SECRET is not set')

const app = new Hono<AuthShieldEnv>()
const auth = authShield({ accessSecret }, { credentialsRequired: true, skip: ['/health'] })
app.use('/api/*', auth)
app.get('/api/orders', requireScopes('read:orders'), (c) => {
  const user = c.get('user')
  const claims = c.get('claims')
  return c.json({ userId: user?.userId ?? null, scope: claims?.['scope'] ?? null, requestId: c.get('requestId') ?? null })
})
app.post('/api/pay', requireAuthentication({ acrValues: 'mfa', maxAgeSec: 300 }), (c) => c.text('paid'))
const engine: 'native' | 'js' = auth.engine
void engine
export default app
