'use strict'

// One error shape for every response: `{ error, code }` with the matching HTTP status.

class ApiError extends Error {
  constructor(status, code, message) {
    super(message)
    this.status = status
    this.code = code
  }
}

function sendError(res, status, code, message) {
  res.status(status).json({ error: message, code })
}

// body-parser marks its failures with `type`; map each to a stable code.
const BODY_ERRORS = {
  'entity.too.large': [413, 'payload_too_large', 'Request body is too large'],
  'entity.parse.failed': [400, 'invalid_json', 'Request body is not valid JSON'],
  'encoding.unsupported': [415, 'unsupported_encoding', 'Unsupported content encoding'],
  'charset.unsupported': [415, 'unsupported_charset', 'Unsupported charset'],
  'request.aborted': [400, 'request_aborted', 'Request aborted'],
  'request.size.invalid': [400, 'invalid_body_size', 'Request size did not match Content-Length'],
}

function notFound(req, res) {
  sendError(res, 404, 'not_found', `No route for ${req.method} ${req.path}`)
}

/** Express error handler: known errors keep their code, anything else is a logged 500. */
function errorHandler(log) {
  // Express recognises error handlers by their four parameters.
  // eslint-disable-next-line no-unused-vars
  return (err, req, res, next) => {
    if (res.headersSent) return req.socket.destroy()
    if (err instanceof ApiError) return sendError(res, err.status, err.code, err.message)
    const body = BODY_ERRORS[err && err.type]
    if (body) return sendError(res, ...body)
    log.error(`[${req.requestId || '-'}] ${req.method} ${req.originalUrl}: ${(err && err.stack) || err}`)
    sendError(res, 500, 'internal_error', 'Internal server error')
  }
}

module.exports = { ApiError, sendError, notFound, errorHandler }
