import type { ErrorRequestHandler, RequestHandler, Response, Router } from 'express';
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import { GatewayError } from '@gateway/errors';
import { setHttpSpanName } from '@gateway/telemetry';
import {
  checkedRedirectUrl,
  registerLeanOperation,
  type AnyLeanOperation,
  type LeanContext,
} from '../http/lean-operation.js';
import { defineOperation, type OperationDefinition } from '../http/operation.js';
import type { OperationCatalog } from '../http/operation-catalog.js';
import { hasAllowedOrigin, requireAllowedOrigin } from '../http/origin-check.js';
import {
  clearSessionCookie,
  readSessionToken,
  type CookieOptions,
} from '../http/session-cookie.js';
import type { EdgeClients } from '../service-clients.js';
import { json } from './admin-operation.js';
import {
  LoggedOutQuery,
  LogoutBody,
  LogoutQuery,
  LogoutResultJson,
  ResumeQuery,
} from './auth-schemas.js';
import {
  browserErrorResponses,
  ERROR_PAGE_NOTE,
  errorResponses,
  LOGIN_FLOW_TAGS,
  PUBLIC,
  redirectResponse,
} from './login-operations.js';

type ObjectSchema = z.ZodType<Record<string, unknown>>;

export type AuthRouteOptions = {
  clients: Pick<EdgeClients, 'authFlow'>;
  /** Start, callback, exchange and introspect (login-operations.ts). */
  loginOperations: readonly AnyLeanOperation[];
  lean: LeanContext;
  /** The CORS allowlist (spec 2.15), which is also the cookie-write Origin allowlist (5). */
  isAllowedOrigin: (origin: string) => Promise<boolean>;
  /** NODE_ENV is production: the session cookie is `Secure` (spec 4.2 step 7). */
  secureCookies: boolean;
};

export const LOGOUT_PATH = '/v1/auth/logout';

const GATEWAY_COOKIE: NonNullable<RouteConfig['security']> = [{ gatewayCookieAuth: [] }];

/** Spec 4.1-4.7: the login flow, its handoff to platform backends, and logout. */
export function registerAuthRoutes(
  router: Router,
  catalog: OperationCatalog,
  options: AuthRouteOptions,
): void {
  const { authFlow } = options.clients;
  const cookie: CookieOptions = { secure: options.secureCookies };
  const tags = LOGIN_FLOW_TAGS;
  const allowedOrigin = requireAllowedOrigin(options.isAllowedOrigin);

  for (const operation of options.loginOperations) {
    registerLeanOperation(router, catalog, operation, options.lean);
  }

  defineGuardedOperation(router, catalog, [browserRedirect, requireSessionCookie], {
    operationId: 'resumeAuthentication',
    method: 'get',
    path: '/v1/auth/resume',
    summary: 'Continue a login after an onboarding step (called by the identity UI).',
    description:
      'Re-evaluates onboarding on the server, then redirects to the next onboarding step or ' +
      'issues the handoff and redirects to the platform callback. ' +
      ERROR_PAGE_NOTE,
    tags,
    security: GATEWAY_COOKIE,
    query: ResumeQuery,
    responses: {
      302: redirectResponse('The next onboarding step, or the platform callback with a code.'),
      ...browserErrorResponses({
        400: 'Malformed or unknown parameter (VALIDATION_ERROR).',
        401: 'No session cookie, or a session of another user or environment (UNAUTHORIZED).',
        404: 'Unknown transaction, or its platform is not active (NOT_FOUND).',
        409: 'A handoff already exists for the transaction (CONFLICT).',
        503: 'A gateway service is unavailable.',
      }),
    },
    handler: async ({ query }, _req, res) => {
      const answer = await authFlow.resumeLogin({
        transactionId: query.transaction,
        sessionToken: sessionTokenOf(res),
      });
      redirectTo(res, answer.redirectUrl);
    },
  });

  // Spec 4.6, 5. The Origin check runs first and a refused request changes nothing: no
  // revocation, no cookie change. Otherwise any site could log a user out of the gateway
  // by posting to this endpoint (logout CSRF); SameSite=Lax keeps the cookie off a
  // cross-site POST but not off a same-site one from a host that is not allowlisted. Once
  // the Origin is accepted, "the session is revoked in every case": on success, when the
  // service rejects returnTo (it revokes first), and when the request itself is malformed
  // (`finishLogoutAfterError` below); every such answer clears the cookie.
  defineGuardedOperation(router, catalog, [noStore, allowedOrigin], {
    operationId: 'logout',
    method: 'post',
    path: LOGOUT_PATH,
    summary: 'End the gateway session and get the identity end-session URL.',
    description:
      'Needs an allowlisted `Origin`. `returnTo` may come in the body or the query; the body ' +
      'wins. The body may be absent, empty or `{}`. The session is revoked and the cookie ' +
      'cleared in every case once the Origin is accepted, also when `returnTo` is rejected.',
    tags,
    security: GATEWAY_COOKIE,
    query: LogoutQuery,
    body: LogoutBody,
    responses: {
      200: {
        ...json(
          'The session is ended; send the browser to `logoutUrl` when present.',
          LogoutResultJson,
        ),
        headers: {
          'Set-Cookie': {
            description: 'Clears `svc_auth_session` (Max-Age=0).',
            schema: { type: 'string' },
          },
        },
      },
      ...errorResponses({
        400: 'Malformed body or parameter (VALIDATION_ERROR) or malformed `returnTo` (INVALID_REDIRECT).',
        403: 'Missing or non-allowlisted Origin, or `returnTo` not registered (FORBIDDEN).',
        415: 'The body is not JSON (UNSUPPORTED_MEDIA_TYPE).',
        503: 'A gateway service is unavailable.',
      }),
    },
    handler: async ({ query, body }, req, res) => {
      res.locals.logoutRequested = true;
      clearSessionCookie(res, cookie);
      const answer = await authFlow.logout({
        sessionToken: readSessionToken(req),
        returnTo: body?.returnTo ?? query.returnTo,
      });
      res.status(200).json({ logoutUrl: answer.logoutUrl ?? null });
    },
  });

  // Registered after the operation: failures of the logout route pass through here on their
  // way to the error handler (a non-route error middleware; Express skips routes once an
  // error is pending).
  const finishLogoutAfterError: ErrorRequestHandler = async function finishLogoutAfterError(
    error: unknown,
    req,
    res,
    next,
  ) {
    if (req.method !== 'POST' || !hasAllowedOrigin(res) || res.headersSent) {
      next(error);
      return;
    }
    clearSessionCookie(res, cookie);
    const sessionToken = readSessionToken(req);
    // The service was asked already (and revoked before it judged returnTo), or there is no
    // session to revoke.
    if (res.locals.logoutRequested === true || sessionToken === undefined) {
      next(error);
      return;
    }
    try {
      // A malformed request: revoke without a destination, then answer the original error.
      await authFlow.logout({ sessionToken });
      next(error);
    } catch (revokeError) {
      // The session may still be live: that, not the malformed request, is the answer.
      next(revokeError);
    }
  };
  router.use(LOGOUT_PATH, finishLogoutAfterError);

  defineGuardedOperation(router, catalog, [browserRedirect], {
    operationId: 'completeLogout',
    method: 'get',
    path: '/v1/auth/logged-out',
    summary:
      'The identity provider returns the browser here after logout (identity redirect only).',
    description:
      'Redirects to the destination held in `state`. A missing, tampered or expired `state` ' +
      'redirects to ACCOUNT_CENTER_URL (or IDENTITY_POST_LOGOUT_REDIRECT_URI). Platforms never ' +
      'call it. ' +
      ERROR_PAGE_NOTE,
    tags,
    security: PUBLIC,
    query: LoggedOutQuery,
    responses: {
      302: redirectResponse('The destination chosen at logout, or the fallback URL.'),
      ...browserErrorResponses({
        400: 'Unknown parameter (VALIDATION_ERROR).',
        503: 'A gateway service is unavailable.',
      }),
    },
    handler: async ({ query }, _req, res) => {
      // The service owns the fallback for a missing, tampered or expired state (spec 4.7).
      const answer = await authFlow.completeLogout({ state: query.state ?? '' });
      redirectTo(res, answer.redirectUrl);
    },
  });
}

/**
 * An operation behind guards that run before its query or body is read (credentials before
 * validation, as on the admin routes; headers that must be on every answer).
 */
function defineGuardedOperation<
  Q extends ObjectSchema | undefined = undefined,
  P extends ObjectSchema | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(
  router: Router,
  catalog: OperationCatalog,
  guards: RequestHandler[],
  operation: OperationDefinition<Q, P, B>,
): void {
  const nameSpan: RequestHandler = function nameOperationSpan(_req, res, next) {
    setHttpSpanName(res, operation.operationId);
    next();
  };
  router[operation.method](operation.path, nameSpan, ...guards);
  defineOperation(router, catalog, operation);
}

/** Answers of these routes are per caller and carry secrets: never stored by a cache. */
const noStore: RequestHandler = function preventCaching(_req, res, next) {
  res.setHeader('Cache-Control', 'no-store');
  next();
};

/**
 * Browser navigations that end in a redirect: never cached, and no Referer from these URLs,
 * which carry one-time values (the callback's code and state, a transaction id, the logout
 * state). Set before validation, so error answers carry them too.
 */
const browserRedirect: RequestHandler = function prepareBrowserRedirect(_req, res, next) {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Referrer-Policy', 'no-referrer');
  next();
};

/**
 * gatewayCookieAuth for a read (spec 5): the session cookie must be present (401
 * UNAUTHORIZED), checked before the query. Whether it names a live session of the right
 * user is the service's decision.
 */
const requireSessionCookie: RequestHandler = function requireSessionCookie(req, res, next) {
  const token = readSessionToken(req);
  if (token === undefined) {
    next(new GatewayError('UNAUTHORIZED', 'A gateway session cookie is required.'));
    return;
  }
  res.locals.sessionToken = token;
  next();
};

function sessionTokenOf(res: Response): string {
  const token: unknown = res.locals.sessionToken;
  if (typeof token !== 'string') throw new Error('No session token: missing requireSessionCookie');
  return token;
}

/** 302 Found to `url`, never cached. */
function redirectTo(res: Response, url: string): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Location', checkedRedirectUrl(url));
  res.status(302).end();
}
