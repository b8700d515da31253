import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import { GatewayErrorDetailSchema } from '@gateway/contracts';
import { httpStatusOf, isErrorCode, type ErrorCode } from './error-codes.js';
import { GatewayError } from './gateway-error.js';

const connectCodeByStatus: Record<number, Code> = {
  400: Code.InvalidArgument,
  401: Code.Unauthenticated,
  403: Code.PermissionDenied,
  404: Code.NotFound,
  405: Code.Unimplemented,
  408: Code.DeadlineExceeded,
  409: Code.FailedPrecondition,
  413: Code.ResourceExhausted,
  415: Code.InvalidArgument,
  429: Code.ResourceExhausted,
  500: Code.Internal,
  502: Code.Unavailable,
  503: Code.Unavailable,
};

function connectCodeOf(code: ErrorCode): Code {
  return connectCodeByStatus[httpStatusOf(code)] ?? Code.Internal;
}

/** Wraps a GatewayError for the wire: a Connect error with the spec code as a detail. */
export function toConnectError(error: GatewayError): ConnectError {
  const detail =
    error.details === undefined
      ? { code: error.code }
      : { code: error.code, details: error.details };
  return new ConnectError(
    error.message,
    connectCodeOf(error.code),
    undefined,
    [{ desc: GatewayErrorDetailSchema, value: detail }],
    error,
  );
}

// Socket-level failures, whichever code a transport gave them (a transport that cannot
// recognise the error object, e.g. across VM realms, reports them as Internal).
const networkFailureCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ETIMEDOUT',
  'ERR_HTTP2_SESSION_ERROR',
  'ERR_HTTP2_GOAWAY_SESSION',
  'ERR_HTTP2_STREAM_CANCEL',
]);

function hasNetworkFailureCause(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && networkFailureCodes.has(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

// Fail closed, never a 500 for an outage: a service whose PostgreSQL or Redis is
// unreachable or too slow answers SERVICE_UNAVAILABLE (503 + Retry-After at the edge), not
// INTERNAL_ERROR. Duck-typed like @gateway/db's isConnectionFailure (this package has no
// dependency on the drivers): pg SQLSTATEs of a lost connection (08xxx, 57P01-57P03) and
// of a statement cancelled by statement_timeout (57014); pg and knex time-outs and drops;
// ioredis without a connection (no offline queue), or past its command time-out; a Redis
// Cluster with a shard down until its replica takes over (CLUSTERDOWN, TRYAGAIN, redirections
// or slot refreshes that found no master).
const dependencyFailureSqlStates = /^(08...|57P0[123]|57014)$/;
const dependencyFailureNames = new Set([
  'DatabaseUnavailableError',
  'KnexTimeoutError',
  'MaxRetriesPerRequestError',
]);
const dependencyFailureMessages =
  /Connection terminated|timeout expired|Connection ended unexpectedly|timeout exceeded when trying to connect|Stream isn't writeable|Connection is closed|Command timed out|max retries per request|CLUSTERDOWN|TRYAGAIN|Too many Cluster redirections|Failed to refresh slots cache/i;

function isDependencyFailure(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const { name, code, message, errors } = current as Record<string, unknown>;
    if (typeof name === 'string' && dependencyFailureNames.has(name)) return true;
    if (
      typeof code === 'string' &&
      (networkFailureCodes.has(code) || dependencyFailureSqlStates.test(code))
    ) {
      return true;
    }
    if (typeof message === 'string' && dependencyFailureMessages.test(message)) return true;
    if (Array.isArray(errors) && errors.some(isDependencyFailure)) return true; // AggregateError
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Turns whatever a Connect call threw back into a GatewayError. An error raised on purpose
 * by a service keeps its code, message and details. A service that cannot be reached or did
 * not answer in time becomes SERVICE_UNAVAILABLE; anything else INTERNAL_ERROR, whose
 * message says nothing about the cause (the cause is kept for the log).
 */
export function fromConnectError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  const connectError = ConnectError.from(error);
  const [detail] = connectError.findDetails(GatewayErrorDetailSchema);
  if (detail !== undefined && isErrorCode(detail.code)) {
    return new GatewayError(detail.code, connectError.rawMessage, {
      ...(detail.details === undefined ? {} : { details: detail.details }),
      cause: error,
    });
  }
  if (
    connectError.code === Code.Unavailable ||
    connectError.code === Code.DeadlineExceeded ||
    connectError.code === Code.Canceled ||
    hasNetworkFailureCause(connectError)
  ) {
    return new GatewayError('SERVICE_UNAVAILABLE', 'A gateway service is unavailable.', {
      cause: error,
    });
  }
  return new GatewayError('INTERNAL_ERROR', 'Internal error.', { cause: error });
}

/**
 * What a service answers when its work fails with `error`: a GatewayError as a Connect error
 * with its detail; a ConnectError as it is; any other failure is reported to `onUnexpected`
 * (for the log, with its stack) and answered as SERVICE_UNAVAILABLE when PostgreSQL or Redis
 * failed, otherwise as a bare Internal error that reveals nothing. `procedure` names the call
 * (`<service>/<method>`) in the report.
 */
export function serviceErrorOf(
  error: unknown,
  procedure: string,
  onUnexpected: (error: unknown, procedure: string) => void,
): ConnectError {
  if (error instanceof GatewayError) return toConnectError(error);
  // A Connect error is a deliberate protocol answer (e.g. NotFound for an unknown health
  // service name); it passes unchanged.
  if (error instanceof ConnectError) return error;
  onUnexpected(error, procedure);
  if (isDependencyFailure(error)) {
    return toConnectError(
      new GatewayError('SERVICE_UNAVAILABLE', 'A gateway dependency is unavailable.'),
    );
  }
  return new ConnectError('Internal error.', Code.Internal);
}

/**
 * Server-side Connect interceptor, the error boundary of every service call: a failure leaves
 * the service as serviceErrorOf answers it.
 */
export function createErrorInterceptor(options: {
  onUnexpected: (error: unknown, procedure: string) => void;
}): Interceptor {
  return (next) => async (request) => {
    try {
      return await next(request);
    } catch (error) {
      const procedure = `${request.service.typeName}/${request.method.name}`;
      throw serviceErrorOf(error, procedure, options.onUnexpected);
    }
  };
}
