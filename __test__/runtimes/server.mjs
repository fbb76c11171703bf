// A Bun or Deno server of the runtime acceptance (scripts/runtimes/acceptance.js): the package as
// the runtime loads it (the native binary through binding.js, or auth-shield/js), serving
// fetch-app.mjs on 127.0.0.1 at a port of its choosing, which it prints as `listening <port>`.
// The config comes as JSON in AUTH_SHIELD_CASES_CONFIG, the engine in AUTH_SHIELD_ENGINE.
import { createVerifier } from '../../adapters/fetch.mjs'
import { Authenticator as JsAuthenticator } from '../../js/index.mjs'
import { fetchApp } from './fetch-app.mjs'
import { createRequire } from 'node:module'

const env = (name) => (globalThis.Deno ? Deno.env.get(name) : process.env[name])
const config = JSON.parse(env('AUTH_SHIELD_CASES_CONFIG'))
const engine = env('AUTH_SHIELD_ENGINE')
// The native engine is the binary or nothing: auth-shield/fetch would serve the JS engine (with
// a warning) where the binary cannot load, and the answers would still match Node's.
if (engine === 'native') createRequire(import.meta.url)('../../index.js')
let handler
const serve = (request) => handler(request)

if (globalThis.Bun) {
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: serve })
  handler = fetchApp({ createVerifier, JsAuthenticator }, config, engine, `http://127.0.0.1:${server.port}`)
  console.log(`listening ${server.port}`)
} else if (globalThis.Deno) {
  const server = Deno.serve({ hostname: '127.0.0.1', port: 0, onListen() {} }, serve)
  handler = fetchApp({ createVerifier, JsAuthenticator }, config, engine, `http://127.0.0.1:${server.addr.port}`)
  console.log(`listening ${server.addr.port}`)
} else {
  throw new Error('server.mjs runs under Bun or Deno; Node is the in-process reference')
}
