import type { ErrorRequestHandler, RequestHandler, Response, Router } from 'express';
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import type { ExchangeHandoffResponse, IntrospectSessionResponse } from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import { setHttpSpanName } from '@gateway/telemetry';
import { getPlatformCaller, requirePlatformCredential } from '../http/basic-credentials.js';
import { defineOperation, type OperationDefinition } from '../http/operation.js';
import { ErrorBodySchema, type OperationCatalog } from '../http/operation-catalog.js';
import { hasAllowedOrigin, requireAllowedOrigin } from '../http/origin-check.js';
import {
  clearSessionCookie,
  readSessionToken,
  setSessionCookie,
  type CookieOptions,
} from '../http/session-cookie.js';
import type { EdgeClients } from '../service-clients.js';
import { json } from './admin-operation.js';
import {
  CallbackQuery,
  ExchangeBody,
  ExchangeResultJson,
  IntrospectBody,
  IntrospectionResultJson,
  LoggedOutQuery,
  LogoutBody,
  LogoutQuery,
  LogoutResultJson,
  ResumeQuery,
  StartQuery,
} from './auth-schemas.js';

type ObjectSchema = z.ZodType<Record<string, unknown>>;

export type AuthRouteOptions = {
  clients: Pick<EdgeClients, 'authFlow' | 'registry'>;
  /** The CORS allowlist (spec 2.15), which is also the cookie-write Origin allowlist (5). */
  isAllowedOrigin: (origin: string) => Promise<boolean>;
  /** NODE_ENV is production: the session cookie is `Secure` (spec 4.2 step 7). */
  secureCookies: boolean;
};

export const LOGOUT_PATH = '/v1/auth/logout';

const PUBLIC: NonNullable<RouteConfig['security']> = [];
const PLATFORM_BASIC: NonNullable<RouteConfig['security']> = [{ platformBasicAuth: [] }];
const GATEWAY_COOKIE: NonNullable<RouteConfig['security']> = [{ gatewayCookieAuth: [] }];

/** Spec 4.1-4.7: the login flow, its handoff to platform backends, and logout. */
export function registerAuthRoutes(
  router: Router,
  catalog: OperationCatalog,
  options: AuthRouteOptions,
): void {
  const { authFlow, registry } = options.clients;
  const cookie: CookieOptions = { secure: options.secureCookies };
  const tags = ['Login flow'];
  const bffKey = requirePlatformCredential(registry, { accept: ['bff'] });
  const anyPlatformKey = requirePlatformCredential(registry, { accept: ['bff', 'backend'] });
  const allowedOrigin = requireAllowedOrigin(options.isAllowedOrigin);

  defineGuardedOperation(router, catalog, [browserRedirect], {
    operationId: 'startAuthentication',
    method: 'get',
    path: '/v1/auth/start',
    summary: 'Start a login or registration (browser navigation).',
    description:
      'Checks the platform and `returnTo` against the registry, then redirects to the ' +
      "authorize endpoint of the platform's identity environment. Errors are JSON on the " +
      'gateway host.',
    tags,
    security: PUBLIC,
    query: StartQuery,
    responses: {
      302: redirectResponse("The identity provider's authorize endpoint."),
      ...errorResponses({
        400: 'Malformed or unknown parameter (VALIDATION_ERROR) or malformed `returnTo` (INVALID_REDIRECT).',
        403: '`returnTo` is not registered, or `onboardingMode` differs from the registry (FORBIDDEN).',
        404: 'Unknown or inactive platform (NOT_FOUND).',
        409: 'The platform cannot start a login (no callback, no BFF key, inactive environment, central onboarding disabled).',
        503: 'A gateway service or the identity service is unavailable.',
      }),
    },
    handler: async ({ query }, _req, res) => {
      const answer = await authFlow.startLogin({
        platformKey: query.platformKey,
        returnTo: query.returnTo,
        onboardingMode: query.onboardingMode,
        defaultScreen: query.defaultScreen,
      });
      redirectTo(res, answer.authorizeUrl);
    },
  });

  defineGuardedOperation(router, catalog, [browserRedirect], {
    operationId: 'handleIdentityCallback',
    method: 'get',
    path: '/v1/auth/callback',
    summary: 'The identity provider returns the browser here (identity redirect only).',
    description:
      'Completes the login, sets the `svc_auth_session` cookie and redirects to the platform ' +
      'callback with a handoff code, or to an onboarding page. An `error` from the identity ' +
      'provider is 400 VALIDATION_ERROR and the browser stays on the gateway. Parameters ' +
      'other than those listed are tolerated: identity providers add their own.',
    tags,
    security: PUBLIC,
    query: CallbackQuery,
    responses: {
      302: redirectResponse(
        'The platform callback with `code=handoff_...`, or an onboarding page.',
        'The gateway session: `svc_auth_session`, HttpOnly, Path=/, SameSite=Lax, Secure in ' +
          'production, Max-Age until the session expires.',
      ),
      ...errorResponses({
        400: 'The identity provider answered with an error, or `code`/`state` is missing (VALIDATION_ERROR).',
        401: 'The code exchange or the ID token failed.',
        403: 'The local account is blocked (ACCOUNT_DELETED, ACCOUNT_INACTIVE).',
        404: 'Invalid, expired or used `state` (NOT_FOUND).',
        409: 'The environment is inactive, or the transaction is already bound.',
        502: 'The discovery document is invalid (IDENTITY_DISCOVERY_INVALID).',
        503: 'A gateway service or the identity service is unavailable.',
      }),
    },
    handler: async ({ query }, _req, res) => {
      if (query.error !== undefined) {
        // Spec 4.2, 7: the platform callback is not called; the browser stays here.
        throw new GatewayError(
          'VALIDATION_ERROR',
          'The identity provider answered with an error instead of a code.',
          { details: identityErrorDetails(query.error) },
        );
      }
      if (query.code === undefined || query.state === undefined) {
        throw new GatewayError('VALIDATION_ERROR', 'Invalid request query.', {
          details: {
            issues: (['code', 'state'] as const)
              .filter((name) => query[name] === undefined)
              .map((name) => ({ location: 'query', path: name, message: 'Required' })),
          },
        });
      }
      const answer = await authFlow.completeLogin({ code: query.code, state: query.state });
      const location = checkedRedirectUrl(answer.redirectUrl);
      setSessionCookie(res, answer.sessionToken, answer.sessionExpiresAt, cookie);
      redirectTo(res, location);
    },
  });

  defineGuardedOperation(router, catalog, [browserRedirect, requireSessionCookie], {
    operationId: 'resumeAuthentication',
    method: 'get',
    path: '/v1/auth/resume',
    summary: 'Continue a login after an onboarding step (called by the identity UI).',
    description:
      'Re-evaluates onboarding on the server, then redirects to the next onboarding step or ' +
      'issues the handoff and redirects to the platform callback.',
    tags,
    security: GATEWAY_COOKIE,
    query: ResumeQuery,
    responses: {
      302: redirectResponse('The next onboarding step, or the platform callback with a code.'),
      ...errorResponses({
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

  defineGuardedOperation(router, catalog, [noStore, bffKey], {
    operationId: 'exchangeAuthenticationHandoff',
    method: 'post',
    path: '/v1/auth/exchange',
    summary: 'Redeem a handoff code for the session and user (platform backend).',
    description:
      'Basic authentication with the BFF key of the redirect pair whose callback received ' +
      'the code. Credentials are checked before the body. The platform must reject the ' +
      'answer when `environment` is not the one it expects.',
    tags,
    security: PLATFORM_BASIC,
    body: ExchangeBody,
    responses: {
      200: json('The gateway session and the signed-in user.', ExchangeResultJson),
      ...errorResponses({
        400: 'Malformed body (VALIDATION_ERROR).',
        401: 'Missing, wrong or inactive platform credentials (UNAUTHORIZED).',
        403: 'A backend key was used (FORBIDDEN).',
        404: 'Invalid, expired, used or wrong-platform code (NOT_FOUND).',
        415: 'The body is not JSON (UNSUPPORTED_MEDIA_TYPE).',
        503: 'A gateway service is unavailable.',
      }),
    },
    handler: async ({ body }, _req, res) => {
      const caller = getPlatformCaller(res);
      const answer = await authFlow.exchangeHandoff({
        code: body.code,
        platformKey: caller.platformKey,
        // A BFF key always serves a callback; without one it redeems nothing (404).
        callbackUrl: caller.callbackUrl ?? '',
      });
      res.status(200).json(toExchangeResult(answer));
    },
  });

  defineGuardedOperation(router, catalog, [noStore, anyPlatformKey], {
    operationId: 'introspectGatewaySession',
    method: 'post',
    path: '/v1/auth/introspect',
    summary: 'Check a gateway token (platform backend).',
    description:
      "Basic authentication with the platform's backend key or any of its BFF keys. A session " +
      "created by another platform's login is `active: false`. Every answer carries " +
      '`Cache-Control: no-store`.',
    tags,
    security: PLATFORM_BASIC,
    body: IntrospectBody,
    responses: {
      200: json(
        'Whether the token names a live session of this platform.',
        IntrospectionResultJson,
      ),
      ...errorResponses({
        400: 'Malformed body (VALIDATION_ERROR).',
        401: 'Missing, wrong or inactive platform credentials (UNAUTHORIZED).',
        415: 'The body is not JSON (UNSUPPORTED_MEDIA_TYPE).',
        503: 'A gateway service is unavailable: answer 503, do not sign the user out.',
      }),
    },
    handler: async ({ body }, _req, res) => {
      const caller = getPlatformCaller(res);
      const answer = await authFlow.introspectSession({
        token: body.token,
        platformKey: caller.platformKey,
      });
      res.status(200).json(toIntrospectionResult(answer));
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
      'call it.',
    tags,
    security: PUBLIC,
    query: LoggedOutQuery,
    responses: {
      302: redirectResponse('The destination chosen at logout, or the fallback URL.'),
      ...errorResponses({
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

/**
 * A redirect target the auth-flow service built from the registry (spec 5: never from a
 * query parameter). Only an absolute http(s) URL is followed; anything else is a fault of
 * the service (500), not a redirect.
 */
function checkedRedirectUrl(url: string): string {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new Error('The auth-flow service answered a redirect that is not a URL');
  }
  if (protocol !== 'https:' && protocol !== 'http:') {
    throw new Error('The auth-flow service answered a redirect that is not http(s)');
  }
  return url;
}

/** 302 Found to `url`, never cached. */
function redirectTo(res: Response, url: string): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Location', checkedRedirectUrl(url));
  res.status(302).end();
}

// RFC 6749 section 4.1.2.1: error codes are printable ASCII without `"` and `\`. Anything
// else is not echoed.
const IDENTITY_ERROR_CODE = /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,100}$/;

function identityErrorDetails(error: string): { identityError: string } | undefined {
  return IDENTITY_ERROR_CODE.test(error) ? { identityError: error } : undefined;
}

function required<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw new Error(`The auth-flow service answered without ${field}`);
  return value;
}

/** Spec 4.4: the exchange body, camelCase; `user.picture` only when known. */
export function toExchangeResult(answer: ExchangeHandoffResponse) {
  const session = required(answer.session, 'session');
  const user = required(answer.user, 'user');
  const environment = required(answer.environment, 'environment');
  const onboarding = required(answer.onboarding, 'onboarding');
  const profile = required(answer.profile, 'profile');
  return {
    session: { id: session.id, expiresAt: session.expiresAt, gatewayToken: session.gatewayToken },
    user: {
      id: user.id,
      sub: user.sub,
      issuer: user.issuer,
      ...(user.picture === undefined || user.picture === '' ? {} : { picture: user.picture }),
    },
    platform: { key: answer.platformKey },
    environment: { key: environment.key, tier: environment.tier },
    onboarding: {
      status: onboarding.status,
      requirementVersion: onboarding.requirementVersion,
      missingFields: [...onboarding.missingFields],
      canCompleteCentrally: onboarding.canCompleteCentrally,
    },
    profile: { status: profile.status, missingFields: [...profile.missingFields] },
    permissions: [...answer.permissions],
    returnTo: answer.returnTo,
  };
}

/** Spec 4.5: `{ active: false }` carries nothing else. */
export function toIntrospectionResult(answer: IntrospectSessionResponse) {
  if (!answer.active) return { active: false as const };
  const user = required(answer.user, 'user');
  const environment = required(answer.environment, 'environment');
  return {
    active: true as const,
    sessionId: answer.sessionId,
    expiresAt: answer.expiresAt,
    platformKey: answer.platformKey,
    user: {
      id: user.id,
      issuer: user.issuer,
      subject: user.subject,
      email: user.email === '' ? null : user.email,
      emailVerified: user.emailVerified,
      status: user.status,
    },
    environment: { key: environment.key, tier: environment.tier },
  };
}

/** A 302 answer in the OpenAPI description; `setCookie` describes a cookie it sets. */
function redirectResponse(description: string, setCookie?: string) {
  const text = { type: 'string' as const };
  return {
    description: `302 Found: ${description}`,
    headers: {
      Location: { description: 'Where the browser goes next.', schema: text },
      'Cache-Control': { description: 'Always `no-store`.', schema: text },
      ...(setCookie === undefined
        ? {}
        : { 'Set-Cookie': { description: setCookie, schema: text } }),
    },
  };
}

function errorResponses(descriptions: Partial<Record<number, string>>): RouteConfig['responses'] {
  return Object.fromEntries(
    Object.entries(descriptions).map(([status, description]) => [
      status,
      { description, content: { 'application/json': { schema: ErrorBodySchema } } },
    ]),
  );
}
