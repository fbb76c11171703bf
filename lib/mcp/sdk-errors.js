'use strict'

// The MCP SDK's `requireBearerAuth` answers by the class of what a verifier throws
// (`instanceof` its own InvalidTokenError → 401, InsufficientScopeError → 403, ServerError →
// 500, any other OAuthError → 400, anything else → 500). A verifier must therefore throw the
// classes of the very SDK module the app loaded: the CommonJS entry requires them, the ESM
// entry imports them (lib/mcp's callers pass them in), so an app that imports both from ESM,
// or requires both, gets the same classes. The SDK is the app's, never a dependency of ours.

const SDK_ERRORS = '@modelcontextprotocol/sdk/server/auth/errors.js'

/** The SDK's error classes, required (CommonJS); an Error naming the package when it is missing. */
function requireSdkErrors() {
  try {
    return require(SDK_ERRORS)
  } catch (err) {
    const missing = new Error(`auth-shield/mcp: createTokenVerifier is for the MCP SDK's requireBearerAuth and needs @modelcontextprotocol/sdk installed (${err.message})`)
    missing.code = 'ERR_AUTH_SHIELD_MCP_SDK'
    missing.cause = err
    throw missing
  }
}

/**
 * The error to throw for a refusal (the fetch adapter's Refused): 401 → InvalidTokenError, 403
 * insufficient_scope → InsufficientScopeError, 5xx → ServerError, any other status (400 tenant,
 * 403 tenant, 429) → InvalidRequestError. The message is the failure code's; `code` and
 * `status` are auth-shield's.
 */
function sdkErrorOf(errors, refused) {
  const Class =
    refused.status === 401
      ? errors.InvalidTokenError
      : refused.code === 'insufficient_scope'
        ? errors.InsufficientScopeError
        : refused.status >= 500
          ? errors.ServerError
          : errors.InvalidRequestError
  const err = new Class(refused.error)
  err.code = refused.code
  err.status = refused.status
  return err
}

module.exports = { requireSdkErrors, sdkErrorOf, SDK_ERRORS }
