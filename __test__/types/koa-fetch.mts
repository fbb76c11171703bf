// An ESM consumer of auth-shield/koa and auth-shield/fetch: the documented usage compiles, and
// the decision's union narrows on `ok` / `action`.
import koaShield, { UnauthorizedError, TooManyRequestsError } from 'auth-shield/koa'
import type { KoaAuthState, KoaContext } from 'auth-shield/koa'
import fetchEntry, { createVerifier, AuthShieldError } from 'auth-shield/fetch'
import type { Verification } from 'auth-shield/fetch'
import { trace } from '@opentelemetry/api'

const config = { accessSecret: 'a-secret-of-at-least-thirty-two-bytes!!' }

const mw = koaShield(config, {
  key: 'jwt',
  errors: 'respond',
  skip: (ctx: KoaContext) => ctx.path === '/health',
  isRevoked: async (ctx, claims) => claims.sub === 'gone' && ctx.method === 'GET',
})
const engine: 'native' | 'js' = mw.engine
const thrown = koaShield(config, { errors: 'throw' })
// @ts-expect-error 'next' is Express's and Fastify's; Koa throws
koaShield(config, { errors: 'next' })
const state: KoaAuthState = {}
const userId: string | undefined = state.user?.userId
const isKoaError = (e: unknown): boolean => e instanceof UnauthorizedError || e instanceof TooManyRequestsError
// What Koa's `app.use` calls: (ctx, next) => Promise.
const run = (ctx: KoaContext): Promise<unknown> => thrown(ctx, async () => {})

const verifyRequest = createVerifier(config, { credentialsRequired: true, getToken: (request) => new URL(request.url).searchParams.get('token') })
const same = fetchEntry.createVerifier(config)
// dpopUrl gets what the other callbacks get: the Request here, ctx in Koa.
createVerifier(config, { dpopUrl: (request) => `https://api.example.com/api${new URL(request.url).pathname}` })
koaShield(config, { dpopUrl: (ctx) => `https://api.example.com/api${ctx.originalUrl}` })
// @ts-expect-error the caller answers refusals: no onError
createVerifier(config, { onError: () => {} })
// The tracing option takes @opentelemetry/api's own objects (typed structurally: no dependency).
createVerifier(config, { tracing: { trace } })
createVerifier(config, { tracing: { spans: true, tracer: trace.getTracer('app') } })
koaShield(config, { tracing: { trace, spans: true } })
// @ts-expect-error spans is a boolean
createVerifier(config, { tracing: { trace, spans: 'yes' } })

export async function GET(request: Request): Promise<Response> {
  const auth: Verification = await verifyRequest(request)
  if (!auth.ok) {
    const code: string = auth.code
    const status: number = auth.status
    return code === 'rate_limited' && status === 429 ? auth.response : auth.response
  }
  if (auth.action === 'skip') return new Response('public')
  const sub: unknown = auth.claims?.sub
  return Response.json({ user: auth.user?.userId ?? null, sub }, { headers: auth.headers })
}
const isAuthError = (e: unknown): boolean => e instanceof AuthShieldError
export { engine, userId, isKoaError, same, isAuthError, run }
