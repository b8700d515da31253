import type { RequestHandler, Response } from 'express';
import type { Client } from '@connectrpc/connect';
import type { AuthFlowService } from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import type { AccessTokenVerifier } from '@gateway/oidc';
import { assertAllowedOrigin, isCookieWrite } from '../http/origin-check.js';
import { readSessionToken } from '../http/session-cookie.js';
import { bearerTokenOf } from './authentication.js';
import { permissionsOfUser, type Permission } from './principal.js';

/** The signed-in user of a user route (spec 5: userBearerAuth or gatewayCookieAuth). */
export type UserCaller = {
  /** The local user (spec 2.5). */
  userId: string;
  environmentKey: string;
  /** How the request authenticated: a cookie-authenticated write clears the cookie. */
  via: 'bearer' | 'cookie';
  /** Set for a cookie session. */
  sessionId?: string;
  permissions: Permission[];
};

export type UserAuthentication = {
  /**
   * Middleware for user routes. A Bearer header wins over the cookie: a user token is
   * provisioned (spec 5 rule 5); a machine token is 403 FORBIDDEN. Without a Bearer header
   * the `svc_auth_session` cookie must name a live session of an ACTIVE user; a cookie write
   * (anything but GET and HEAD) first needs an allowlisted `Origin` (403 FORBIDDEN). No
   * credentials: 401 UNAUTHORIZED. The caller is in `res.locals` (read it with
   * `getUserCaller`).
   */
  requireUser: RequestHandler;
};

export type UserAuthenticationOptions = {
  verifier: AccessTokenVerifier;
  authFlow: Pick<Client<typeof AuthFlowService>, 'provisionTokenUser' | 'authenticateSession'>;
  /** The CORS allowlist (spec 2.15), which is also the cookie-write Origin allowlist (5). */
  isAllowedOrigin: (origin: string) => Promise<boolean>;
};

export function createUserAuthentication(options: UserAuthenticationOptions): UserAuthentication {
  const { verifier, authFlow } = options;

  async function viaBearer(token: string, res: Response): Promise<UserCaller> {
    let verified;
    try {
      verified = await verifier.verify(token);
    } catch (error) {
      if (error instanceof GatewayError && error.code === 'UNAUTHORIZED') {
        res.setHeader('WWW-Authenticate', 'Bearer error="invalid_token"');
      }
      throw error;
    }
    if (verified.kind !== 'user') {
      throw new GatewayError('FORBIDDEN', 'Machine tokens cannot call user endpoints.');
    }
    const answer = await authFlow.provisionTokenUser({
      issuer: verified.issuer,
      subject: verified.subject ?? '',
      environmentKey: verified.environmentKey,
      deployment: verified.deployment,
      ...(verified.email === undefined ? {} : { email: verified.email }),
      emailVerified: verified.emailVerified,
    });
    return {
      userId: answer.userId,
      environmentKey: verified.environmentKey,
      via: 'bearer',
      permissions: permissionsOfUser(answer.permissions),
    };
  }

  async function viaCookie(
    sessionToken: string,
    method: string,
    origin: string | undefined,
  ): Promise<UserCaller> {
    // Before any service call, so a refused write changes nothing.
    if (isCookieWrite(method)) await assertAllowedOrigin(origin, options.isAllowedOrigin);
    const session = await authFlow.authenticateSession({ sessionToken });
    return {
      userId: session.userId,
      environmentKey: session.environmentKey,
      via: 'cookie',
      sessionId: session.sessionId,
      permissions: permissionsOfUser(session.permissions),
    };
  }

  const requireUser: RequestHandler = async function authenticateUser(req, res, next) {
    try {
      const token = bearerTokenOf(req);
      let caller: UserCaller;
      if (token !== undefined) {
        caller = await viaBearer(token, res);
      } else {
        const sessionToken = readSessionToken(req);
        if (sessionToken === undefined) {
          res.setHeader('WWW-Authenticate', 'Bearer');
          throw new GatewayError('UNAUTHORIZED', 'Authentication is required.');
        }
        caller = await viaCookie(sessionToken, req.method, req.headers.origin);
      }
      res.locals.userCaller = caller;
      next();
    } catch (error) {
      next(error);
    }
  };

  return { requireUser };
}

/** The caller established by `requireUser` for this request. */
export function getUserCaller(res: Response): UserCaller {
  const caller: unknown = res.locals.userCaller;
  if (typeof caller !== 'object' || caller === null) {
    throw new Error('No user caller: the route is not behind requireUser');
  }
  return caller as UserCaller;
}
