import { defineOperation, type AnyOperation, type FailureContext } from '../http/operation.js';
import {
  LoggedOutQuery,
  LogoutBody,
  LogoutQuery,
  LogoutResultJson,
  ResumeQuery,
} from './auth-schemas.js';
import { LOGIN_FLOW_TAGS } from './login-operations.js';
import {
  browserErrorResponses,
  ERROR_PAGE_NOTE,
  errorResponses,
  json,
  redirectResponse,
} from './openapi-responses.js';

// Spec 4.3, 4.6, 4.7: resuming a login after onboarding, logout, and the way back from it.

export const LOGOUT_PATH = '/v1/auth/logout';
const tags = LOGIN_FLOW_TAGS;

const resumeAuthentication = defineOperation({
  auth: { kind: 'cookie' },
  response: { kind: 'browser-redirect' },
  operationId: 'resumeAuthentication',
  method: 'get',
  path: '/v1/auth/resume',
  summary: 'Continue a login after an onboarding step (called by the identity UI).',
  description:
    'Re-evaluates onboarding on the server, then redirects to the next onboarding step or ' +
    'issues the handoff and redirects to the platform callback. ' +
    ERROR_PAGE_NOTE,
  tags,
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
  handler: async ({ query, caller, services }) => {
    const answer = await services.clients.authFlow.resumeLogin({
      transactionId: query.transaction,
      // A read of a cookie operation always has its cookie (the runner answers 401 without).
      sessionToken: caller.sessionToken ?? '',
    });
    return answer.redirectUrl;
  },
});

// Spec 4.6, 5. The Origin check runs first and a refused request changes nothing: no
// revocation, no cookie change. Otherwise any site could log a user out of the gateway by
// posting to this endpoint (logout CSRF); SameSite=Lax keeps the cookie off a cross-site POST
// but not off a same-site one from a host that is not allowlisted. Once the Origin is
// accepted, "the session is revoked in every case": on success, when the service rejects
// returnTo (it revokes first), and when the request itself is malformed (`revokeAfterFailure`
// below); every such answer clears the cookie.
const logout = defineOperation({
  auth: { kind: 'cookie' },
  response: { kind: 'json', status: 200 },
  operationId: 'logout',
  method: 'post',
  path: LOGOUT_PATH,
  summary: 'End the gateway session and get the identity end-session URL.',
  description:
    'Needs an allowlisted `Origin`. `returnTo` may come in the body or the query; the body ' +
    'wins. The body may be absent, empty or `{}`. The session is revoked and the cookie ' +
    'cleared in every case once the Origin is accepted, also when `returnTo` is rejected.',
  tags,
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
  handler: async ({ query, body, caller, services, sessionCookie }) => {
    sessionCookie.clear();
    const answer = await services.clients.authFlow.logout({
      sessionToken: caller.sessionToken,
      returnTo: body?.returnTo ?? query.returnTo,
    });
    return { logoutUrl: answer.logoutUrl ?? null };
  },
  afterFailure: revokeAfterFailure,
});

/**
 * A failed logout past its Origin check: the cookie is cleared, and a session the service was
 * not asked about yet (the request was malformed) is revoked without a destination; then the
 * original error is answered, unless the revocation failed: the session may still be live,
 * and that, not the malformed request, is the answer.
 */
async function revokeAfterFailure(failure: unknown, context: FailureContext): Promise<unknown> {
  context.sessionCookie.clear();
  // The service was asked already (it revoked before it judged returnTo), or there is no
  // session to revoke.
  if (context.handlerStarted || context.sessionToken === undefined) return failure;
  try {
    await context.services.clients.authFlow.logout({ sessionToken: context.sessionToken });
    return failure;
  } catch (revokeError) {
    return revokeError;
  }
}

const completeLogout = defineOperation({
  auth: { kind: 'public' },
  response: { kind: 'browser-redirect' },
  operationId: 'completeLogout',
  method: 'get',
  path: '/v1/auth/logged-out',
  summary: 'The identity provider returns the browser here after logout (identity redirect only).',
  description:
    'Redirects to the destination held in `state`. A missing, tampered or expired `state` ' +
    'redirects to ACCOUNT_CENTER_URL (or IDENTITY_POST_LOGOUT_REDIRECT_URI). Platforms never ' +
    'call it. ' +
    ERROR_PAGE_NOTE,
  tags,
  query: LoggedOutQuery,
  responses: {
    302: redirectResponse('The destination chosen at logout, or the fallback URL.'),
    ...browserErrorResponses({
      400: 'Unknown parameter (VALIDATION_ERROR).',
      503: 'A gateway service is unavailable.',
    }),
  },
  handler: async ({ query, services }) => {
    // The service owns the fallback for a missing, tampered or expired state (spec 4.7).
    const answer = await services.clients.authFlow.completeLogout({ state: query.state ?? '' });
    return answer.redirectUrl;
  },
});

/** Spec 4.3, 4.6, 4.7. */
export const sessionFlowOperations: readonly AnyOperation[] = [
  resumeAuthentication,
  logout,
  completeLogout,
];
