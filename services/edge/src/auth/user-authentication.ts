import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@connectrpc/connect';
import type { AuthFlowService } from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import type { AccessTokenVerifier } from '@gateway/oidc';
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
   * The caller of a user operation. A Bearer header wins over the cookie: a user token is
   * provisioned (spec 5 rule 5); a machine token is 403 FORBIDDEN. Without a Bearer header
   * the `svc_auth_session` cookie must name a live session of an ACTIVE user (a cookie write
   * passed the runner's Origin check before, origin-check.ts). No credentials: 401
   * UNAUTHORIZED, with `WWW-Authenticate` on `res`.
   */
  requireUser(req: IncomingMessage, res: ServerResponse): Promise<UserCaller>;
};

export type UserAuthenticationOptions = {
  verifier: AccessTokenVerifier;
  authFlow: Pick<Client<typeof AuthFlowService>, 'provisionTokenUser' | 'authenticateSession'>;
};

export function createUserAuthentication(options: UserAuthenticationOptions): UserAuthentication {
  const { verifier, authFlow } = options;

  async function viaBearer(token: string, res: ServerResponse): Promise<UserCaller> {
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

  async function viaCookie(sessionToken: string): Promise<UserCaller> {
    const session = await authFlow.authenticateSession({ sessionToken });
    return {
      userId: session.userId,
      environmentKey: session.environmentKey,
      via: 'cookie',
      sessionId: session.sessionId,
      permissions: permissionsOfUser(session.permissions),
    };
  }

  async function requireUser(req: IncomingMessage, res: ServerResponse): Promise<UserCaller> {
    const token = bearerTokenOf(req);
    if (token !== undefined) return viaBearer(token, res);
    const sessionToken = readSessionToken(req);
    if (sessionToken === undefined) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      throw new GatewayError('UNAUTHORIZED', 'Authentication is required.');
    }
    return viaCookie(sessionToken);
  }

  return { requireUser };
}
