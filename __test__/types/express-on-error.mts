// `onError` of auth-shield/express (issue 22 §4): `res` is Express's response, so answering with
// `res.status(…).json(…)` compiles, and a hook annotated with express's own Request / Response
// (as express-jwt users write them) is accepted. Type-checked only, never run.
import express from 'express'
import type { NextFunction, Request, Response } from 'express'
import authShield from 'auth-shield/express'

const app = express()
const secret = 'at-least-32-bytes-of-secret-for-types!'

app.use(
  authShield(
    { accessSecret: secret },
    {
      onError: (err, req, res, next) => {
        if (err.code === 'rate_limited') return next(err)
        res.status(err.status).json({ code: err.code, requestId: req.requestId, path: req.path })
      },
    },
  ),
)

// express-jwt's handler shape, with express's own types on every parameter.
function expressHandler(err: authShield.AuthShieldError, req: Request, res: Response, next: NextFunction): void {
  if (req.get('accept') === 'text/plain') {
    res.status(err.status).type('text').send(err.code)
    return
  }
  if (err.status === 429) return next(err)
  res.status(err.status).set('Cache-Control', 'no-store').json({ code: err.code })
}
app.use(authShield({ accessSecret: secret }, { onError: expressHandler }))
app.use(authShield({ secret, algorithms: ['HS256'], onError: expressHandler }))

// A hook that answers with node:http's methods only still compiles.
app.use(
  authShield(
    { accessSecret: secret },
    {
      onError(err, _req, res) {
        res.statusCode = err.status
        res.end(err.code)
      },
    },
  ),
)
