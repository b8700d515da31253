import type { Request, Response } from 'express';
import { GatewayPlatformError } from '../errors.js';
import type { GatewayPlatform } from '../gateway-platform.js';
import type { ExchangeResult, IntrospectedSession } from '../gateway-types.js';
import type { PlatformSessions } from './platform-sessions.js';

/** A signed-in user as route handlers see it. */
export type SignedIn = {
  /** The exchange body kept when the user signed in. */
  result: ExchangeResult;
  /** The current introspection of the gateway session (at most introspectCacheSeconds old). */
  session: IntrospectedSession;
};

/** What gatewayAuth hands to requireSignIn and optionalSignIn for one request. */
export type GatewayAuthContext = {
  platform: GatewayPlatform;
  sessions: PlatformSessions;
  /** The login route's path on the site, mount path included. */
  loginPath: string;
};

const contexts = new WeakMap<Request, GatewayAuthContext>();
const signedInUsers = new WeakMap<Response, SignedIn>();

export function attachAuthContext(req: Request, context: GatewayAuthContext): void {
  contexts.set(req, context);
}

export function authContextOf(req: Request): GatewayAuthContext {
  const context = contexts.get(req);
  if (context === undefined) {
    throw new GatewayPlatformError(
      'GATEWAY_AUTH_NOT_MOUNTED',
      'requireSignIn/optionalSignIn ran before gatewayAuth: mount app.use(gatewayAuth(platform)) first',
    );
  }
  return context;
}

/** Records the signed-in user for getSignedIn, and as `res.locals.gateway` for views. */
export function markSignedIn(res: Response, signedIn: SignedIn): void {
  signedInUsers.set(res, signedIn);
  res.locals.gateway = signedIn;
}

/**
 * The signed-in user of this request, as established by requireSignIn or optionalSignIn
 * earlier in the chain; undefined when signed out or when neither ran.
 */
export function getSignedIn(res: Response): SignedIn | undefined {
  return signedInUsers.get(res);
}
