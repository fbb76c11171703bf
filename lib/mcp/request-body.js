'use strict'

// The JSON-RPC body of a Fetch-API request, read from a clone (the MCP transport still reads the
// request itself) and bounded: which tool a request calls is only known once its body is read,
// and a body too large to read whole could hide a call, so it is refused, never let through.

// The MCP SDK's own default bound for a request body (4 MiB).
const MAX_BODY_BYTES = 4 * 1024 * 1024

const TOO_LARGE = Symbol('auth-shield.mcp.too-large')

/**
 * The parsed body of `request` (a clone is read), `undefined` when it is empty or not JSON (no
 * tool can run from it), or TOO_LARGE past `maxBytes` (declared or received).
 */
async function readJsonBody(request, maxBytes = MAX_BODY_BYTES) {
  if (Number(request.headers.get('content-length')) > maxBytes) return TOO_LARGE
  const copy = request.clone()
  if (copy.body === null) return undefined
  const reader = copy.body.getReader()
  const decoder = new TextDecoder()
  let received = 0
  let text = ''
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      received += value.byteLength
      if (received > maxBytes) {
        await reader.cancel()
        return TOO_LARGE
      }
      text += decoder.decode(value, { stream: true })
    }
  } finally {
    reader.releaseLock()
  }
  text += decoder.decode()
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

module.exports = { readJsonBody, TOO_LARGE, MAX_BODY_BYTES }
