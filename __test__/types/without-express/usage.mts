// Compiled without @types/express (see tsconfig.json here): nothing imports 'express'.
import authShield from 'auth-shield/express'
import type { IncomingMessage, ServerResponse } from 'node:http'

const middleware = authShield(
  { accessSecret: 'at-least-32-bytes-of-secret-for-types!' },
  {
    onError: (err, req, res, next) => {
      if (err.status === 503) return next(err)
      res.status(err.status).json({ code: err.code, requestId: req.requestId, tenant: req.tenantId })
    },
  },
)
// Any Node HTTP server's request and response fit the middleware itself.
declare const req: IncomingMessage
declare const res: ServerResponse
middleware(req, res, () => {})
