import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  authContextOf,
  markSignedIn,
  type GatewayAuthContext,
  type SignedIn,
} from './auth-context.js';

// Route guards for use after gatewayAuth. Each request's platform session is checked with
// introspect (cached, spec 4.5): an inactive gateway session ends the platform session; an
// unavailable gateway answers 503 and keeps it (the user stays signed in).

type SignInCheck =
  { state: 'signed-in'; signedIn: SignedIn } | { state: 'signed-out' } | { state: 'unavailable' };

async function checkSignIn(
  context: GatewayAuthContext,
  req: Request,
  res: Response,
): Promise<SignInCheck> {
  const current = await context.sessions.current(req);
  if (current === undefined) {
    // A cookie naming no session: drop it, so the browser stops sending it.
    if (context.sessions.keyOf(req) !== undefined) {
      res.append('Set-Cookie', context.sessions.clearCookie());
    }
    return { state: 'signed-out' };
  }
  const answer = await context.platform.introspect(current.result.session.gatewayToken);
  if (answer.state === 'unavailable') return { state: 'unavailable' };
  if (answer.state === 'inactive' || answer.session.sessionId !== current.result.session.id) {
    await context.sessions.end(current.key);
    res.append('Set-Cookie', context.sessions.clearCookie());
    return { state: 'signed-out' };
  }
  const signedIn = { result: current.result, session: answer.session };
  markSignedIn(res, signedIn);
  return { state: 'signed-in', signedIn };
}

function answerUnavailable(res: Response): void {
  res
    .status(503)
    .set('Cache-Control', 'no-store')
    .set('Retry-After', '5')
    .type('text/plain')
    .send('Sign-in is temporarily unavailable. Please try again in a moment.');
}

/**
 * Lets signed-in users through, with `getSignedIn(res)` (and `res.locals.gateway`) set.
 * Signed out: a GET or HEAD is redirected (302) to the login route with
 * `returnTo=<the original URL>`; other methods get 401. The gateway unavailable: 503, and
 * the platform session is kept.
 */
export function requireSignIn(): RequestHandler {
  return async function requireSignedInUser(req: Request, res: Response, next: NextFunction) {
    const context = authContextOf(req);
    const check = await checkSignIn(context, req, res);
    if (check.state === 'signed-in') {
      next();
      return;
    }
    if (check.state === 'unavailable') {
      answerUnavailable(res);
      return;
    }
    res.set('Cache-Control', 'no-store');
    if (req.method === 'GET' || req.method === 'HEAD') {
      const query = new URLSearchParams({ returnTo: req.originalUrl });
      res.redirect(302, `${context.loginPath}?${query.toString()}`);
      return;
    }
    res.status(401).type('text/plain').send('Sign-in required.');
  };
}

/**
 * Like requireSignIn, but signed-out users go on too (getSignedIn(res) is then undefined),
 * for pages that show either state. The gateway unavailable with a platform session: 503.
 */
export function optionalSignIn(): RequestHandler {
  return async function loadSignedInUser(req: Request, res: Response, next: NextFunction) {
    const check = await checkSignIn(authContextOf(req), req, res);
    if (check.state === 'unavailable') {
      answerUnavailable(res);
      return;
    }
    next();
  };
}
