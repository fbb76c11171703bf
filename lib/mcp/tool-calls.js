'use strict'

// Per-tool scopes (MCP authorization, scope challenges): a `tools/call` of a tool that needs
// more than the server's scopes is refused 403 insufficient_scope naming what the call needs,
// as any route requirement is. Which tool a request calls is in its JSON-RPC body: one message
// or a batch (an array), each `{ method: 'tools/call', params: { name } }`.

/**
 * The requirements `body` (a parsed JSON-RPC message or batch) meets before it runs: one per
 * `tools/call` of a tool in `requirements` (a Map of tool name → requirement), in the body's
 * order; an empty array when it calls none. Anything that is not a tool call (another method, a
 * response, a body that is not JSON-RPC) needs nothing more: the MCP server runs no tool for it.
 */
function toolRequirements(body, requirements) {
  if (requirements.size === 0 || body === null || typeof body !== 'object') return NONE
  if (!Array.isArray(body)) {
    const one = requirementOf(body, requirements)
    return one === undefined ? NONE : [one]
  }
  const all = []
  for (const message of body) {
    const one = requirementOf(message, requirements)
    if (one !== undefined && !all.includes(one)) all.push(one)
  }
  return all
}

const NONE = Object.freeze([])

function requirementOf(message, requirements) {
  if (message === null || typeof message !== 'object' || message.method !== 'tools/call') return undefined
  const params = message.params
  if (params === null || typeof params !== 'object' || typeof params.name !== 'string') return undefined
  return requirements.get(params.name)
}

module.exports = { toolRequirements }
