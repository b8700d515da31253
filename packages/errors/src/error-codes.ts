// Every error code the gateway answers with, and the HTTP status each one maps to. This is
// the one table of spec section 7; route handlers never choose a status themselves.
//
// Where the spec gives a status but "no code" (a 409 conflict, a 401 for bad platform
// credentials, a 403 for a backend key on exchange), the gateway still answers with a
// code, the generic one of that status: CONFLICT, UNAUTHORIZED or FORBIDDEN.
// The codes below the line are the gateway's own additions (docs/decisions.md).
export const errorStatusByCode = {
  VALIDATION_ERROR: 400,
  INVALID_REDIRECT: 400,
  IDENTITY_ENVIRONMENT_NOT_FOUND: 400,
  UNAUTHORIZED: 401,
  AUTHORIZATION_CODE_EXCHANGE_FAILED: 401,
  TOKEN_RESPONSE_INVALID: 401,
  ID_TOKEN_INVALID: 401,
  NONCE_MISMATCH: 401,
  FORBIDDEN: 403,
  ACCOUNT_DELETED: 403,
  ACCOUNT_INACTIVE: 403,
  NOT_FOUND: 404,
  IDENTITY_USER_NOT_FOUND: 404,
  PLATFORM_CALLBACK_NOT_CONFIGURED: 409,
  PLATFORM_CREDENTIALS_NOT_CONFIGURED: 409,
  IDENTITY_ENVIRONMENT_INACTIVE: 409,
  CENTRAL_ONBOARDING_DISABLED: 409,
  AUTH_TRANSACTION_ALREADY_BOUND: 409,
  CONFLICT: 409,
  PLATFORM_ARCHIVED: 409,
  ROLE_REQUIRES_DEPLOYMENT_ENVIRONMENT: 409,
  LAST_PLATFORM_ADMIN: 409,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDENTITY_DISCOVERY_INVALID: 502,
  IDENTITY_UNAVAILABLE: 503,
  OIDC_CLIENT_NOT_CONFIGURED: 503,
  IDENTITY_ENVIRONMENT_NOT_CONFIGURED: 503,
  IDENTITY_ENVIRONMENT_SECRET_KEY_MISSING: 503,
  IDENTITY_SERVICE_NOT_CONFIGURED: 503,
  // ---- gateway additions ----
  /**
   * A back-channel logout token that fails a check of OpenID Connect Back-Channel Logout 1.0
   * section 2.6 (signature, issuer, audience, age, events, sid/sub, nonce, a jti seen before).
   */
  LOGOUT_TOKEN_INVALID: 400,
  /** The HTTP method is not served on this path. */
  METHOD_NOT_ALLOWED: 405,
  /**
   * The request (its headers, or its body) did not arrive within the edge's deadline; the
   * connection is closed.
   */
  REQUEST_TIMEOUT: 408,
  /** The request body is larger than the route accepts. */
  PAYLOAD_TOO_LARGE: 413,
  /** An `Expect` header other than `100-continue`. */
  EXPECTATION_FAILED: 417,
  /** The request's headers are larger than the edge reads. */
  REQUEST_HEADER_FIELDS_TOO_LARGE: 431,
  /** Too many requests from one client or address; comes with Retry-After. */
  RATE_LIMITED: 429,
  /** An unexpected failure; the message never says more than that. */
  INTERNAL_ERROR: 500,
  /** A store (PostgreSQL, Redis) or an internal service cannot be reached; comes with Retry-After. */
  SERVICE_UNAVAILABLE: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof errorStatusByCode;

export function isErrorCode(value: string): value is ErrorCode {
  return Object.prototype.hasOwnProperty.call(errorStatusByCode, value);
}

export function httpStatusOf(code: ErrorCode): number {
  return errorStatusByCode[code];
}
