// ESM entry of `auth-shield/mcp`: the CommonJS module's exports by name. createTokenVerifier
// throws the MCP SDK's error classes, so it takes them from the ESM build of the SDK here, the
// build an ESM app's `requireBearerAuth` checks them against (the CommonJS entry requires the
// CommonJS build). The import starts when a verifier is made and is awaited by its first call.
import mcpEntry from './mcp.js'

const SDK_ERRORS = '@modelcontextprotocol/sdk/server/auth/errors.js'

export const { mcpAuth, createMcpVerifier } = mcpEntry

export function createTokenVerifier(options) {
  const errors = import(SDK_ERRORS).catch((err) => {
    const missing = new Error(`auth-shield/mcp: createTokenVerifier is for the MCP SDK's requireBearerAuth and needs @modelcontextprotocol/sdk installed (${err.message})`)
    missing.code = 'ERR_AUTH_SHIELD_MCP_SDK'
    missing.cause = err
    throw missing
  })
  // Awaited by every call; a missing SDK rejects each call (a 500 from requireBearerAuth), never an unhandled rejection.
  errors.catch(() => {})
  return mcpEntry.createTokenVerifier(options, errors)
}

export default { mcpAuth, createMcpVerifier, createTokenVerifier }
