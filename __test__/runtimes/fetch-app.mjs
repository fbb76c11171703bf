// The Fetch handler the Node, Bun and Deno servers of the runtime acceptance run
// (scripts/runtimes/acceptance.js): auth-shield/fetch's verifier over the native engine, or over
// an auth-shield/js Authenticator. A refusal is answered with the verifier's own Response.

/**
 * handler(request) → Response, for `shield` (createVerifier of auth-shield/fetch, the
 * Authenticator of auth-shield/js), `engine` 'native' or 'js' and the server's `origin` (a DPoP
 * proof's htu is checked against it).
 */
export function fetchApp({ createVerifier, JsAuthenticator }, config, engine, origin) {
  const verify = createVerifier(engine === 'js' ? new JsAuthenticator(config) : config, { dpopOrigin: origin })
  return async (request) => {
    const auth = await verify(request)
    if (!auth.ok) return auth.response
    return Response.json({ user: auth.user.userId ?? auth.user.sub ?? null }, { headers: auth.headers })
  }
}
