import type { JsonObject } from '@bufbuild/protobuf';
import { httpStatusOf, type ErrorCode } from './error-codes.js';

export type ErrorBody = { code: ErrorCode; message: string; details?: JsonObject };

/**
 * The one error type of the gateway. Services throw it with a code of spec section 7; it
 * crosses Connect as an error detail and the edge turns it into `{ code, message, details }`
 * with the status of that code. Its message is shown to the caller, so it must never carry
 * a secret, a token or an internal detail; put the underlying failure in `cause`.
 */
export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  readonly code: ErrorCode;
  readonly details: JsonObject | undefined;
  /**
   * Set when the gateway refuses on purpose and tells the caller when to come back (a rate
   * limit, load shedding): the answer carries `Retry-After`, and it is not a failure to log.
   */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options?: { details?: JsonObject; cause?: unknown; retryAfterSeconds?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options?.details;
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }

  get status(): number {
    return httpStatusOf(this.code);
  }

  toBody(): ErrorBody {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

export function isGatewayError(error: unknown): error is GatewayError {
  return error instanceof GatewayError;
}
