// The Fetch handler of the bundled JS engine (auth-shield/js alone: what runs in workerd),
// also run by Node unbundled and bundled (scripts/runtimes/acceptance.js). It answers with the
// engine's verdict: status, code, the limiter's counters and wait.

/** handler(request) → Response over an auth-shield/js Authenticator. */
export function engineApp(Authenticator, config) {
  const engine = new Authenticator(config)
  return (request) => {
    const sender = { dpop: request.headers.get('dpop'), method: request.method, url: request.url }
    const result = engine.authenticate(request.headers.get('authorization'), null, null, sender)
    const headers = { 'content-type': 'application/json' }
    if (result.rateLimitLimit !== undefined) headers['ratelimit-limit'] = String(result.rateLimitLimit)
    if (result.rateLimitRemaining !== undefined) headers['ratelimit-remaining'] = String(result.rateLimitRemaining)
    if (result.retryAfterMs) headers['retry-after'] = String(Math.ceil(result.retryAfterMs / 1000))
    const body = result.authenticated ? { user: result.userId, scope: result.scope } : { code: result.errorCode }
    return new Response(JSON.stringify(body), { status: result.authenticated ? 200 : result.errorStatus, headers })
  }
}
