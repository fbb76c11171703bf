// Claims typed once for every adapter (the AuthShield.Claims declaration-merging point), and
// callbacks written with the framework's own request type (Express's Request from
// @types/express): strict, exactOptionalPropertyTypes, type-checked only.
import type { Request } from 'express'
import express from 'express'
import authShield from 'auth-shield/express'
import { createVerifier } from 'auth-shield/fetch'
import koaShield from 'auth-shield/koa'

declare global {
  namespace AuthShield {
    interface Claims {
      org_id: string
      permissions?: string[]
    }
  }
}

const accessSecret = 'x'.repeat(32)
const app = express()
app.use(
  authShield(
    { accessSecret },
    {
      // Express's own Request, with its query and get(): accepted where the option names the part auth-shield reads.
      isRevoked: (req: Request, claims) => claims.org_id !== req.query['org'] || req.get('x-blocked') === '1',
      getToken: (req: Request) => (typeof req.query['token'] === 'string' ? req.query['token'] : undefined),
      skip: { custom: (req: Request) => req.path === '/health' },
      // Every option may be left undefined (docs/options.md): it takes its default.
      realm: undefined,
      jwks: undefined,
      onError: undefined,
    },
  ),
)
app.get('/me', (req, res) => {
  const org: string | undefined = req.auth?.org_id
  const permissions: string[] | undefined = req.auth?.permissions
  res.json({ org, permissions })
})

const verifyRequest = createVerifier({ accessSecret })
export async function GET(request: globalThis.Request): Promise<Response> {
  const auth = await verifyRequest(request)
  if (!auth.ok) return auth.response
  const org: string | undefined = auth.claims?.org_id
  return Response.json({ org }, { headers: auth.headers })
}

koaShield({ accessSecret }, { isRevoked: (ctx, claims) => claims.org_id === ctx.path })
