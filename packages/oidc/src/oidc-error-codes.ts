import { GatewayError, type ErrorCode } from '@gateway/errors';
import { errors as joseErrors, type JWTVerifyGetKey } from 'jose';
import { AuthorizationResponseError, ClientError, ResponseBodyError } from 'openid-client';
import { authorizationErrorRefusal } from './authorization-error.js';

/**
 * The one table from what openid-client and jose refuse to the spec's codes (spec 7). Every
 * failure of the relying party and of the token checks passes through `oidcFailure` with the
 * step it happened in; the first row of that step whose `when` holds answers it. An error
 * that is already a GatewayError is kept as it is.
 *
 * | step                   | what failed                                         | code                               |
 * | ---------------------- | --------------------------------------------------- | ---------------------------------- |
 * | discovery              | unreachable, slow, not 200, not JSON                | 503 IDENTITY_UNAVAILABLE           |
 * | discovery              | another issuer, not a document, bad or no endpoint  | 502 IDENTITY_DISCOVERY_INVALID     |
 * | authorization response | `iss` missing or another, state, duplicates (9207)  | 401 ID_TOKEN_INVALID               |
 * | authorization response | `error` instead of a code                           | 400 VALIDATION_ERROR               |
 * | code grant             | token endpoint unreachable, slow, 5xx, not JSON     | 503 IDENTITY_UNAVAILABLE           |
 * | code grant             | token endpoint refuses (4xx, OAuth error, challenge)| 401 AUTHORIZATION_CODE_EXCHANGE_FAILED |
 * | code grant             | no id_token, access_token or token_type; bad types  | 401 TOKEN_RESPONSE_INVALID         |
 * | code grant             | endpoint not advertised or not allowed (http)       | 502 IDENTITY_DISCOVERY_INVALID     |
 * | code grant, ID token   | nonce missing or another (OIDC Core 3.1.3.7 11)     | 401 NONCE_MISMATCH                 |
 * | code grant, ID token   | any other claim, algorithm, signature, key, format  | 401 ID_TOKEN_INVALID               |
 * | ID token, access token | key set unreachable, slow, not a key set (below)    | 503 IDENTITY_UNAVAILABLE           |
 * | access token           | anything about the token (spec 5)                   | 401 UNAUTHORIZED                   |
 */
export type OidcStep =
  'discovery' | 'authorization-response' | 'code-grant' | 'id-token' | 'access-token';

export type OidcFailureContext = {
  /** The bound on the call, named in a time-out's message. */
  timeoutMs?: number;
  /** The issuer the step was for, named in discovery failures' details. */
  issuer?: string;
};

type Row = {
  when: (error: unknown) => boolean;
  answer: (error: unknown, context: OidcFailureContext) => Error;
};

// --- What the libraries throw -----------------------------------------------------------------

/** openid-client's ClientError and oauth4webapi's OperationProcessingError carry a `code`. */
function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** What an oauth4webapi error was about: openid-client wraps it in `cause`, once. */
function detailsOf(error: unknown): Record<string, unknown> {
  let cause = (error as { cause?: unknown } | null)?.cause;
  if (codeOf(cause) !== undefined) cause = (cause as { cause?: unknown }).cause;
  return typeof cause === 'object' && cause !== null ? (cause as Record<string, unknown>) : {};
}

const hasCode =
  (...codes: string[]) =>
  (error: unknown) =>
    codes.includes(codeOf(error) ?? '');

/**
 * fetch's own failure (refused, reset, DNS): a TypeError without a Node argument code. By
 * name, not `instanceof`: fetch may throw from another realm, and then openid-client wraps
 * it as an error of no code.
 */
function isUnreachable(error: unknown): boolean {
  const seen = unwrapped(error);
  if ((seen as { name?: unknown } | null)?.name !== 'TypeError') return false;
  const code = codeOf(seen);
  return code === undefined || !code.startsWith('ERR_');
}

/** What openid-client did not recognise and wrapped in an error of no code. */
function unwrapped(error: unknown): unknown {
  return error instanceof ClientError && codeOf(error) === undefined ? error.cause : error;
}

function isTimeout(error: unknown): boolean {
  const name = (unwrapped(error) as { name?: unknown } | null)?.name;
  return (
    hasCode('OAUTH_TIMEOUT', 'OAUTH_ABORT')(error) ||
    name === 'TimeoutError' ||
    name === 'AbortError' ||
    error instanceof joseErrors.JWKSTimeout
  );
}

/** The HTTP status of an answer that was not the expected one, when there was an answer. */
function statusOf(error: unknown): number | undefined {
  const { status, cause } = (error ?? {}) as { status?: unknown; cause?: unknown };
  if (typeof status === 'number') return status;
  return cause instanceof Response ? cause.status : undefined;
}

/** Short and safe to show: never an upstream body. */
export function unavailableReason(error: unknown, timeoutMs: number | undefined): string {
  if (isTimeout(error)) return `did not answer within ${timeoutMs ?? '?'} ms`;
  if (hasCode('OAUTH_RESPONSE_IS_NOT_JSON', 'OAUTH_PARSE_ERROR')(error))
    return 'did not answer JSON';
  if ((error as { name?: unknown } | null)?.name === 'SyntaxError') return 'did not answer JSON';
  const status = statusOf(error);
  if (status !== undefined) return `answered HTTP ${status}`;
  return 'is unreachable';
}

/** The token endpoint's OAuth error code, when it is one (RFC 6749 5.2). */
function oauthErrorOf(error: unknown): string {
  if (error instanceof ResponseBodyError) return error.error.slice(0, 100);
  return 'unknown';
}

/** What oauth4webapi said, under openid-client's wrapping. */
function innerMessage(error: unknown): string {
  const cause = (error as { cause?: unknown } | null)?.cause;
  const source = codeOf(cause) !== undefined ? cause : error;
  const message = (source as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : '';
}

/** A failed claim, header or parse of the ID token rather than of the token response. */
function isAboutTheIdToken(error: unknown): boolean {
  const details = detailsOf(error);
  return (
    'claims' in details ||
    'header' in details ||
    typeof details.claim === 'string' ||
    innerMessage(error).includes('JWT')
  );
}

/**
 * The ID token's nonce is another or missing, while every claim required before it is
 * present (oauth4webapi checks presence in the order aud, exp, iat, iss, sub, nonce).
 */
function isNonceFailure(error: unknown): boolean {
  const details = detailsOf(error);
  if (details.claim === 'nonce') return true;
  const claims = details.claims as Record<string, unknown> | undefined;
  return (
    codeOf(error) === 'OAUTH_INVALID_RESPONSE' &&
    claims !== undefined &&
    claims.nonce === undefined &&
    ['aud', 'exp', 'iat', 'iss', 'sub'].every((claim) => claims[claim] !== undefined)
  );
}

/**
 * A key set whose fetch fails (unreachable, slow, not 200, not a key set) is the provider's
 * failure, not the token's: its getter throws 503 IDENTITY_UNAVAILABLE. A set without the
 * token's key (or with several that fit) is the token's, and goes on to the token's rows.
 */
export function keyFetchFailuresAsUnavailable(keys: JWTVerifyGetKey): JWTVerifyGetKey {
  return async (header, token) => {
    try {
      return await keys(header, token);
    } catch (error) {
      if (
        error instanceof joseErrors.JWKSNoMatchingKey ||
        error instanceof joseErrors.JWKSMultipleMatchingKeys
      ) {
        throw error;
      }
      throw new GatewayError(
        'IDENTITY_UNAVAILABLE',
        "The identity provider's signing keys could not be fetched.",
        { cause: error },
      );
    }
  };
}

// --- The answers ---------------------------------------------------------------------------------

const answer =
  (code: ErrorCode, message: string) =>
  (error: unknown): GatewayError =>
    new GatewayError(code, message, { cause: error });

const unavailable =
  (what: string) =>
  (error: unknown, context: OidcFailureContext): GatewayError =>
    new GatewayError(
      'IDENTITY_UNAVAILABLE',
      `The identity provider's ${what} ${unavailableReason(error, context.timeoutMs)}.`,
      {
        cause: error,
        ...(context.issuer === undefined ? {} : { details: { issuer: context.issuer } }),
      },
    );

const discoveryInvalid =
  (message: string) =>
  (error: unknown, context: OidcFailureContext): GatewayError => {
    const reported = (detailsOf(error).body as { issuer?: unknown } | undefined)?.issuer;
    const details: Record<string, string> = {};
    if (context.issuer !== undefined) details.issuer = context.issuer;
    if (typeof reported === 'string') details.reportedIssuer = reported.slice(0, 300);
    return new GatewayError('IDENTITY_DISCOVERY_INVALID', message, { cause: error, details });
  };

const unauthorized = (message: string) => () => new GatewayError('UNAUTHORIZED', message);

const missingOrForbiddenEndpoint = hasCode(
  'OAUTH_MISSING_SERVER_METADATA',
  'OAUTH_INVALID_SERVER_METADATA',
  'OAUTH_HTTP_REQUEST_FORBIDDEN',
  'OAUTH_REQUEST_PROTOCOL_FORBIDDEN',
);

const table: Record<OidcStep, Row[]> = {
  discovery: [
    {
      when: (error) =>
        isUnreachable(error) ||
        isTimeout(error) ||
        hasCode(
          'OAUTH_RESPONSE_IS_NOT_CONFORM',
          'OAUTH_RESPONSE_IS_NOT_JSON',
          'OAUTH_PARSE_ERROR',
        )(error),
      answer: unavailable('discovery document'),
    },
    {
      when: hasCode('OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED'),
      answer: discoveryInvalid("The identity provider's discovery document names another issuer."),
    },
    {
      when: () => true,
      answer: discoveryInvalid(
        "The identity provider's discovery document is not a valid discovery document.",
      ),
    },
  ],
  'authorization-response': [
    {
      when: (error) => error instanceof AuthorizationResponseError,
      answer: (error) => authorizationErrorRefusal((error as AuthorizationResponseError).error),
    },
    {
      when: () => true,
      answer: answer(
        'ID_TOKEN_INVALID',
        'The authorization response does not come from this login or issuer.',
      ),
    },
  ],
  'code-grant': [
    {
      when: missingOrForbiddenEndpoint,
      answer: discoveryInvalid('The identity provider does not advertise a usable token_endpoint.'),
    },
    {
      when: (error) => isUnreachable(error) || isTimeout(error),
      answer: unavailable('token endpoint'),
    },
    { when: (error) => (statusOf(error) ?? 0) >= 500, answer: unavailable('token endpoint') },
    {
      when: (error) =>
        hasCode('OAUTH_RESPONSE_IS_NOT_JSON')(error) ||
        (hasCode('OAUTH_PARSE_ERROR')(error) && !isAboutTheIdToken(error)),
      answer: unavailable('token endpoint'),
    },
    {
      when: (error) =>
        error instanceof ResponseBodyError ||
        hasCode('OAUTH_WWW_AUTHENTICATE_CHALLENGE', 'OAUTH_RESPONSE_IS_NOT_CONFORM')(error),
      answer: (error) =>
        new GatewayError(
          'AUTHORIZATION_CODE_EXCHANGE_FAILED',
          'The identity provider refused the code.',
          {
            details: { error: oauthErrorOf(error) },
            cause: error,
          },
        ),
    },
    {
      when: isAboutTheIdToken,
      answer: (error, context) => oidcFailure('id-token', error, context),
    },
    {
      when: () => true,
      answer: answer('TOKEN_RESPONSE_INVALID', 'The token response has no valid ID token.'),
    },
  ],
  'id-token': [
    {
      when: isNonceFailure,
      answer: answer('NONCE_MISMATCH', 'The ID token nonce does not match the login.'),
    },
    { when: () => true, answer: answer('ID_TOKEN_INVALID', 'The ID token is invalid.') },
  ],
  'access-token': [
    {
      when: (error) => error instanceof joseErrors.JWTExpired,
      answer: unauthorized('The access token has expired.'),
    },
    {
      when: (error) => claimOf(error) === 'aud',
      answer: unauthorized('The access token is not meant for this gateway (audience).'),
    },
    {
      when: (error) => claimOf(error) === 'iss',
      answer: unauthorized("The access token's issuer does not match."),
    },
    {
      when: (error) => claimOf(error) === 'nbf',
      answer: unauthorized('The access token is not valid yet.'),
    },
    {
      when: (error) => claimOf(error) === 'exp',
      answer: unauthorized('The access token has no valid expiry.'),
    },
    {
      when: (error) => error instanceof joseErrors.JWTClaimValidationFailed,
      answer: unauthorized('The access token has invalid claims.'),
    },
    {
      when: (error) => error instanceof joseErrors.JOSEAlgNotAllowed,
      answer: unauthorized('The access token is signed with an algorithm that is not accepted.'),
    },
    {
      when: (error) => error instanceof joseErrors.JWKSNoMatchingKey,
      answer: unauthorized('The access token is signed with an unknown key.'),
    },
    {
      when: (error) => error instanceof joseErrors.JWSSignatureVerificationFailed,
      answer: unauthorized('The access token signature is invalid.'),
    },
    {
      when: (error) => error instanceof joseErrors.JOSEError,
      answer: unauthorized('The access token is malformed.'),
    },
  ],
};

function claimOf(error: unknown): string | undefined {
  return error instanceof joseErrors.JWTClaimValidationFailed ? error.claim : undefined;
}

/**
 * The spec's answer to a failure of openid-client or jose in `step`. A GatewayError is kept;
 * an error no row of the step names (a bug, not an answer of the provider) is rethrown as it is.
 */
export function oidcFailure(
  step: OidcStep,
  error: unknown,
  context: OidcFailureContext = {},
): Error {
  if (error instanceof GatewayError) return error;
  const row = table[step].find((candidate) => candidate.when(error));
  if (row !== undefined) return row.answer(error, context);
  return error instanceof Error ? error : new Error(String(error));
}
