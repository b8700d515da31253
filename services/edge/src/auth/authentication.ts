import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { Client } from '@connectrpc/connect';
import type { AuthFlowService, RequestContextSchema } from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import type { AccessTokenVerifier, VerifiedAccessToken } from '@gateway/oidc';
import { assertAllowedOrigin, isCookieWrite } from '../http/origin-check.js';
import { readSessionToken } from '../http/session-cookie.js';
import { permissionsOfUser, principalOf, type Permission, type Principal } from './principal.js';

export type Authentication = {
  /**
   * The caller of this request, or undefined when it brings no credentials. Invalid
   * credentials throw 401 UNAUTHORIZED; an unreachable identity service 503.
   */
  authenticate(req: IncomingMessage): Promise<Principal | undefined>;
  /**
   * The caller of an admin operation: 401 without valid credentials (with its
   * `WWW-Authenticate` on `res`), 403 without `permission`.
   */
  requirePermission(
    req: IncomingMessage,
    res: ServerResponse,
    permission: Permission,
  ): Promise<Principal>;
  /**
   * The caller of an onboarding schema operation of one platform (spec 4.13): 401 without
   * valid credentials, 403 without `onboarding:schema:read` (or `:write`), and 403 when a
   * caller limited to one platform (`svc_platform` / `platform_key`) asks for another one,
   * unless it holds `platforms:admin` (which limited tokens never do). The platform is the
   * operation's `platformKey` path parameter.
   */
  requireSchemaPermission(
    req: IncomingMessage,
    res: ServerResponse,
    access: 'read' | 'write',
    params: { platformKey?: string },
  ): Promise<Principal>;
  /**
   * Spec 4.13 global fields: `platforms:admin` together with the read or write scope; a
   * credential limited to one platform (`svc_platform`) cannot change them.
   */
  requireGlobalSchemaPermission(
    req: IncomingMessage,
    res: ServerResponse,
    access: 'read' | 'write',
  ): Promise<Principal>;
};

const BEARER = /^Bearer[ \t]+([A-Za-z0-9\-._~+/]+=*)[ \t]*$/i;

/**
 * The token of an `Authorization: Bearer` header. Undefined when there is none, or when
 * the header uses another scheme (Basic is a platform credential, not an admin one).
 */
export function bearerTokenOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined || !/^Bearer(?:[ \t]|$)/i.test(header)) return undefined;
  const match = BEARER.exec(header);
  if (match?.[1] === undefined) {
    throw new GatewayError('UNAUTHORIZED', 'The Bearer token is malformed.');
  }
  return match[1];
}

/**
 * Bearer authentication of users and machines (spec 5). The token's issuer selects the
 * identity environment through the registry; `verifier` checks signature, audience and
 * token kind, and rejects ID tokens. A user token is provisioned as a local user (rule 5)
 * and carries the permissions of that user's roles, which `userPermissions` answers.
 *
 * Without a Bearer header, the gateway cookie of a signed-in user is accepted too (spec 5:
 * "a cookie session of a deployment-environment platform_admin"): its permissions are the
 * session's snapshot (empty outside the deployment environment, stripped at once when the
 * role is revoked), and a write needs an allowlisted Origin, checked before anything else.
 */
export function createAuthentication(options: AuthenticationOptions): Authentication {
  const authenticate = (req: IncomingMessage): Promise<Principal | undefined> =>
    authenticateRequest(options, req);
  const requireCaller = (req: IncomingMessage, res: ServerResponse): Promise<Principal> =>
    requireCallerOf(authenticate, req, res);

  return {
    authenticate,
    async requirePermission(req, res, permission) {
      const principal = await requireCaller(req, res);
      if (!principal.permissions.includes(permission)) throw lacking(permission);
      return principal;
    },
    async requireSchemaPermission(req, res, access, params) {
      return assertSchemaAccess(await requireCaller(req, res), access, params);
    },
    async requireGlobalSchemaPermission(req, res, access) {
      return assertGlobalSchemaAccess(await requireCaller(req, res), access);
    },
  };
}

type AuthenticationOptions = {
  verifier: AccessTokenVerifier;
  userPermissions: (token: VerifiedAccessToken) => Promise<string[]>;
  cookieSessions: CookieSessions;
};

type CookieSessions = {
  authFlow: Pick<Client<typeof AuthFlowService>, 'authenticateSession' | 'getAccount'>;
  isAllowedOrigin: (origin: string) => Promise<boolean>;
};

/** The caller named by the Bearer token, or else by the gateway cookie; undefined without either. */
async function authenticateRequest(
  options: AuthenticationOptions,
  req: IncomingMessage,
): Promise<Principal | undefined> {
  const token = bearerTokenOf(req);
  if (token === undefined) {
    const sessionToken = readSessionToken(req);
    return sessionToken === undefined
      ? undefined
      : signedInUserOf(req, sessionToken, options.cookieSessions);
  }
  const verified = await options.verifier.verify(token);
  const principal = principalOf(verified);
  if (verified.kind !== 'user') return principal;
  return {
    ...principal,
    permissions: permissionsOfUser(await options.userPermissions(verified)),
  };
}

/** The signed-in user of a gateway cookie session; a write needs an allowlisted Origin first. */
async function signedInUserOf(
  req: IncomingMessage,
  sessionToken: string,
  { authFlow, isAllowedOrigin }: CookieSessions,
): Promise<Principal> {
  if (isCookieWrite(req.method ?? 'GET')) {
    await assertAllowedOrigin(req.headers.origin, isAllowedOrigin);
  }
  const session = await authFlow.authenticateSession({ sessionToken });
  const { account } = await authFlow.getAccount({ userId: session.userId });
  return {
    kind: 'user',
    issuer: account?.issuer ?? '',
    environmentKey: session.environmentKey,
    // Spec 2.4: the deployment environment's key is PROD.
    deployment: session.environmentKey === 'PROD',
    ...(account === undefined ? {} : { subject: account.subject, email: account.email }),
    permissions: permissionsOfUser(session.permissions),
  };
}

/** 401 without valid credentials (with its `WWW-Authenticate` on `res`); otherwise the caller. */
async function requireCallerOf(
  authenticate: (req: IncomingMessage) => Promise<Principal | undefined>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<Principal> {
  let principal: Principal | undefined;
  try {
    principal = await authenticate(req);
  } catch (error) {
    if (error instanceof GatewayError && error.code === 'UNAUTHORIZED') {
      // RFC 6750 section 3: an invalid token names the error.
      res.setHeader('WWW-Authenticate', 'Bearer error="invalid_token"');
    }
    throw error;
  }
  if (principal === undefined) {
    res.setHeader('WWW-Authenticate', 'Bearer');
    throw new GatewayError('UNAUTHORIZED', 'Authentication is required.');
  }
  return principal;
}

function lacking(permission: Permission): GatewayError {
  return new GatewayError('FORBIDDEN', `The caller lacks the ${permission} permission.`, {
    details: { permission },
  });
}

/** Spec 4.13: the schema scope, and the caller's own platform unless it holds platforms:admin. */
function assertSchemaAccess(
  principal: Principal,
  access: 'read' | 'write',
  params: { platformKey?: string },
): Principal {
  const permission: Permission =
    access === 'read' ? 'onboarding:schema:read' : 'onboarding:schema:write';
  if (!principal.permissions.includes(permission)) throw lacking(permission);
  if (
    principal.platformKey !== undefined &&
    principal.platformKey !== params.platformKey &&
    !principal.permissions.includes('platforms:admin')
  ) {
    throw new GatewayError(
      'FORBIDDEN',
      'The caller is limited to the onboarding schema of another platform.',
    );
  }
  return principal;
}

/** Spec 4.13 global fields: platforms:admin and the scope; no platform-limited writer. */
function assertGlobalSchemaAccess(principal: Principal, access: 'read' | 'write'): Principal {
  const scope: Permission =
    access === 'read' ? 'onboarding:schema:read' : 'onboarding:schema:write';
  if (!principal.permissions.includes('platforms:admin')) throw lacking('platforms:admin');
  if (!principal.permissions.includes(scope)) throw lacking(scope);
  if (access === 'write' && principal.platformKey !== undefined) {
    throw new GatewayError(
      'FORBIDDEN',
      'A credential limited to one platform cannot change the global onboarding fields.',
    );
  }
  return principal;
}

/** The registry's audit context of an admin request: who asked, under which request id. */
export function requestContextOf(
  principal: Principal,
  requestId: string,
): MessageInitShape<typeof RequestContextSchema> {
  return {
    actor: {
      kind: principal.kind,
      subject: principal.subject ?? '',
      clientId: principal.clientId ?? '',
      environmentKey: principal.environmentKey,
      email: principal.email ?? '',
    },
    requestId,
  };
}
