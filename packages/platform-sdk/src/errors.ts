/**
 * Codes the SDK itself raises. Every other code on a GatewayPlatformError is the `code` of
 * the gateway's error body (spec 7), for example `NOT_FOUND` for a used or expired handoff.
 */
export type SdkErrorCode =
  /** A setting of createGatewayPlatform or gatewayAuth is invalid (the message names it). */
  | 'INVALID_OPTIONS'
  /** Spec 4.4: the callback arrived without the pending cookie set by startLogin. */
  | 'LOGIN_NOT_PENDING'
  /**
   * The callback's login was started in another browser (a replayed callback URL), or its
   * returnTo carries no nonce: the platform opens no session (login-binding.ts).
   */
  | 'LOGIN_NOT_THIS_BROWSER'
  /** Spec 2.9: the callback's `code` is missing, does not start with handoff_ or is too long. */
  | 'INVALID_CODE'
  /** startLogin's returnTo is empty or longer than 2048 characters (spec 4.1). */
  | 'INVALID_RETURN_TO'
  /** logout's `origin` is not a `scheme://host[:port]` origin. */
  | 'INVALID_ORIGIN'
  /** Spec 4.4: the exchange answered another identity environment than expectedEnvironment. */
  | 'UNEXPECTED_ENVIRONMENT'
  /** The exchange answered another platform than platformKey. */
  | 'UNEXPECTED_PLATFORM'
  /** The gateway answered 5xx or 429, could not be reached, or did not answer in time. */
  | 'GATEWAY_UNAVAILABLE'
  /** The gateway answered 2xx with a body that is not the documented shape. */
  | 'INVALID_GATEWAY_RESPONSE'
  /** The gateway refused with a status but without an error code in its body. */
  | 'GATEWAY_ERROR'
  /** requireSignIn or optionalSignIn ran on a request that gatewayAuth did not see. */
  | 'GATEWAY_AUTH_NOT_MOUNTED';

/**
 * The one error class of the SDK. `code` is a stable string: the gateway's error code (spec 7)
 * when the gateway refused, or one of SdkErrorCode. `status` is the gateway's HTTP status when
 * the gateway answered, undefined otherwise. Low-level failures are kept as `cause`.
 */
export class GatewayPlatformError extends Error {
  override readonly name = 'GatewayPlatformError';
  readonly code: string;
  readonly status: number | undefined;
  /** The gateway's `Retry-After` in seconds, when it sent one with 503 or 429. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: SdkErrorCode | (string & {}),
    message: string,
    options: { status?: number; cause?: unknown; retryAfterSeconds?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** True when `error` means the gateway could not give an answer (not: it refused). */
export function isGatewayUnavailable(error: unknown): boolean {
  return error instanceof GatewayPlatformError && error.code === 'GATEWAY_UNAVAILABLE';
}
