import type { MessageInitShape } from '@bufbuild/protobuf';
import type {
  CompleteLoginRequestSchema,
  ExchangeHandoffResponse,
  IntrospectSessionResponse,
} from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import { authorizationErrorRefusal } from '@gateway/oidc';
import { defineOperation, type AnyOperation } from '../http/operation.js';
import {
  CallbackQuery,
  ExchangeBody,
  ExchangeResultJson,
  IntrospectBody,
  IntrospectionResultJson,
  StartQuery,
} from './auth-schemas.js';
import {
  browserErrorResponses,
  ERROR_PAGE_NOTE,
  errorResponses,
  json,
  redirectResponse,
} from './openapi-responses.js';
import { platformHomePage } from './platform-home.js';

// Spec 4.1, 4.2, 4.4, 4.5: the operations every sign-in passes and platform backends call on
// many of their own requests. Start, exchange and introspect wait on nothing slow and are
// shed at the edge's bound of requests in flight; the callback waits on the identity
// provider and never is.

export const LOGIN_FLOW_TAGS = ['Login flow'];
const tags = LOGIN_FLOW_TAGS;

const startAuthentication = defineOperation({
  auth: { kind: 'public' },
  response: { kind: 'browser-redirect' },
  rateLimit: 'browser',
  sheddable: true,
  operationId: 'startAuthentication',
  method: 'get',
  path: '/v1/auth/start',
  summary: 'Start a login or registration (browser navigation).',
  description:
    'Checks the platform and `returnTo` against the registry, then redirects to the ' +
    "authorize endpoint of the platform's identity environment. " +
    ERROR_PAGE_NOTE,
  tags,
  query: StartQuery,
  responses: {
    302: redirectResponse("The identity provider's authorize endpoint."),
    ...browserErrorResponses({
      400: 'Malformed or unknown parameter (VALIDATION_ERROR) or malformed `returnTo` (INVALID_REDIRECT).',
      403: '`returnTo` is not registered, or `onboardingMode` differs from the registry (FORBIDDEN).',
      404: 'Unknown or inactive platform (NOT_FOUND).',
      409: 'The platform cannot start a login (no callback, no BFF key, inactive environment, central onboarding disabled).',
      429: 'Too many requests from this address (RATE_LIMITED).',
      503: 'A gateway service or the identity service is unavailable.',
    }),
  },
  errorPage: platformHomePage,
  handler: async ({ query, services }) => {
    const answer = await services.clients.authFlow.startLogin({
      platformKey: query.platformKey,
      returnTo: query.returnTo,
      onboardingMode: query.onboardingMode,
      defaultScreen: query.defaultScreen,
    });
    return answer.authorizeUrl;
  },
});

const handleIdentityCallback = defineOperation({
  auth: { kind: 'public' },
  response: { kind: 'browser-redirect' },
  rateLimit: 'browser',
  operationId: 'handleIdentityCallback',
  method: 'get',
  path: '/v1/auth/callback',
  summary: 'The identity provider returns the browser here (identity redirect only).',
  description:
    'Completes the login, sets the `svc_auth_session` cookie and redirects to the platform ' +
    'callback with a handoff code, or to an onboarding page. An `error` from the identity ' +
    'provider ends the login its `state` names: 400 VALIDATION_ERROR, and the browser stays ' +
    'on the gateway. An `iss` (RFC ' +
    "9207) must name the environment's issuer, and must be sent when its discovery document " +
    'advertises `authorization_response_iss_parameter_supported`. Parameters ' +
    'other than those listed are tolerated: identity providers add their own. ' +
    ERROR_PAGE_NOTE,
  tags,
  query: CallbackQuery,
  responses: {
    302: redirectResponse(
      'The platform callback with `code=handoff_...`, or an onboarding page.',
      'The gateway session: `svc_auth_session`, HttpOnly, Path=/, SameSite=Lax, Secure in ' +
        'production, Max-Age until the session expires.',
    ),
    ...browserErrorResponses({
      400: 'The identity provider answered with an error, or `code`/`state` is missing (VALIDATION_ERROR).',
      401: 'The code exchange, the ID token or the response issuer (`iss`) failed.',
      403: 'The local account is blocked (ACCOUNT_DELETED, ACCOUNT_INACTIVE).',
      404: 'Invalid, expired or used `state` (NOT_FOUND).',
      409: 'The environment is inactive, or the transaction is already bound.',
      429: 'Too many requests from this address (RATE_LIMITED).',
      502: 'The discovery document is invalid (IDENTITY_DISCOVERY_INVALID).',
      503: 'A gateway service or the identity service is unavailable.',
    }),
  },
  handler: async ({ query, services, sessionCookie }) => {
    const answer = await services.clients.authFlow.completeLogin(completeLoginRequest(query));
    sessionCookie.set(answer.sessionToken, answer.sessionExpiresAt);
    return answer.redirectUrl;
  },
});

/**
 * Spec 4.2, 7: what the callback asks of the auth-flow. An identity error with a state goes
 * there too, so that the login the state names ends, audited as a refused sign-in, and the
 * auth-flow answers its 400. Without a state it names no login and is refused here, as is a
 * missing code or state; the platform callback is not called and the browser stays here.
 */
function completeLoginRequest(query: {
  code?: string;
  state?: string;
  error?: string;
  iss?: string;
}): MessageInitShape<typeof CompleteLoginRequestSchema> {
  if (query.error !== undefined) {
    if (query.state === undefined) throw authorizationErrorRefusal(query.error);
    return { code: '', state: query.state, identityError: query.error };
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
  // RFC 9207: the issuer of the authorization response, checked by the auth-flow.
  return {
    code: query.code,
    state: query.state,
    ...(query.iss === undefined ? {} : { iss: query.iss }),
  };
}

const exchangeAuthenticationHandoff = defineOperation({
  auth: { kind: 'platform', accept: ['bff'] },
  response: { kind: 'json', status: 200 },
  rateLimit: 'exchange',
  sheddable: true,
  operationId: 'exchangeAuthenticationHandoff',
  method: 'post',
  path: '/v1/auth/exchange',
  summary: 'Redeem a handoff code for the session and user (platform backend).',
  description:
    'Basic authentication with the BFF key of the redirect pair whose callback received ' +
    'the code. Credentials are checked before the body. The platform must reject the ' +
    'answer when `environment` is not the one it expects. A code is redeemed once: a used ' +
    'code answers 404, also to its own key. A 503 spends nothing: after it, or no answer, ' +
    'the same code with the same key may be sent again until the code expires.',
  tags,
  body: ExchangeBody,
  responses: {
    200: json('The gateway session and the signed-in user.', ExchangeResultJson),
    ...errorResponses({
      400: 'Malformed body (VALIDATION_ERROR).',
      401: 'Missing, wrong or inactive platform credentials (UNAUTHORIZED).',
      403: 'A backend key was used (FORBIDDEN).',
      404: 'Invalid, expired, used or wrong-platform code, or its session ended (NOT_FOUND).',
      415: 'The body is not JSON (UNSUPPORTED_MEDIA_TYPE).',
      429: 'Too many requests for this key or address (RATE_LIMITED).',
      503: 'A gateway service is unavailable.',
    }),
  },
  handler: async ({ body, caller, services }) => {
    const answer = await services.clients.authFlow.exchangeHandoff({
      code: body.code,
      platformKey: caller.platformKey,
      // A BFF key always serves a callback; without one it redeems nothing (404).
      callbackUrl: caller.callbackUrl ?? '',
    });
    return toExchangeResult(answer);
  },
});

const introspectGatewaySession = defineOperation({
  auth: { kind: 'platform', accept: ['bff', 'backend'] },
  response: { kind: 'json', status: 200 },
  rateLimit: 'introspect',
  sheddable: true,
  operationId: 'introspectGatewaySession',
  method: 'post',
  path: '/v1/auth/introspect',
  summary: 'Check a gateway token (platform backend).',
  description:
    "Basic authentication with the platform's backend key or any of its BFF keys. A session " +
    "created by another platform's login is `active: false`. Every answer carries " +
    '`Cache-Control: no-store`.',
  tags,
  body: IntrospectBody,
  responses: {
    200: json('Whether the token names a live session of this platform.', IntrospectionResultJson),
    ...errorResponses({
      400: 'Malformed body (VALIDATION_ERROR).',
      401: 'Missing, wrong or inactive platform credentials (UNAUTHORIZED).',
      415: 'The body is not JSON (UNSUPPORTED_MEDIA_TYPE).',
      429: 'Too many requests for this key or address (RATE_LIMITED).',
      503: 'A gateway service is unavailable: answer 503, do not sign the user out.',
    }),
  },
  handler: async ({ body, caller, services }) => {
    const answer = await services.clients.authFlow.introspectSession({
      token: body.token,
      platformKey: caller.platformKey,
    });
    return toIntrospectionResult(answer);
  },
});

/** Spec 4.1, 4.2, 4.4, 4.5. */
export const loginOperations: readonly AnyOperation[] = [
  startAuthentication,
  handleIdentityCallback,
  exchangeAuthenticationHandoff,
  introspectGatewaySession,
];

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
