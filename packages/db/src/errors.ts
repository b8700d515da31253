/**
 * The database could not be reached or did not answer in time. Raised by `Database.ping` and
 * by the helpers here when the failure is about the connection rather than the SQL.
 */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

// Node socket errors seen when a server is down, unreachable or mis-addressed.
const SOCKET_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);

// SQLSTATEs raised while connecting: 08xxx connection exceptions, 57P01-57P03 server shutting
// down or starting, 3D000 database does not exist, 28xxx authentication failed.
const CONNECTION_SQLSTATES = /^(08...|57P0[123]|3D000|28...)$/;

// pg reports its own connection timeouts and drops as plain Errors without a code (pg-pool's
// "timeout exceeded when trying to connect" when no connection came within the timeout).
const CONNECTION_MESSAGES =
  /Connection terminated|timeout expired|timeout exceeded when trying to connect|Connection ended unexpectedly/i;

/** True when `error` says the database could not be reached (as opposed to a failing query). */
export function isConnectionFailure(error: unknown): boolean {
  // Duck-typed on purpose: errors from Node's own modules may come from another realm (e.g.
  // under Jest), where `instanceof Error` is false.
  if (error instanceof DatabaseUnavailableError) return true;
  if (typeof error !== 'object' || error === null) return false;
  const { name, code, message, errors } = error as Record<string, unknown>;
  if (name === 'DatabaseUnavailableError') return true;
  if (name === 'KnexTimeoutError') return true; // no pool connection within the timeout
  if (typeof code === 'string' && (SOCKET_ERROR_CODES.has(code) || CONNECTION_SQLSTATES.test(code)))
    return true;
  if (typeof message === 'string' && CONNECTION_MESSAGES.test(message)) return true;
  return Array.isArray(errors) && errors.some(isConnectionFailure); // AggregateError
}

/** The message of anything thrown. */
export function errorMessage(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const { message } = error as Record<string, unknown>;
    if (typeof message === 'string') return message;
  }
  return String(error);
}

/** Re-raises connection failures as DatabaseUnavailableError; other errors pass unchanged. */
export function asDatabaseError(error: unknown, doing: string): unknown {
  if (error instanceof DatabaseUnavailableError || !isConnectionFailure(error)) return error;
  return new DatabaseUnavailableError(
    `Database unavailable while ${doing}: ${errorMessage(error)}`,
    { cause: error },
  );
}

/**
 * PostgreSQL's unique_violation (SQLSTATE 23505), as pg and PGlite alike report it; with
 * `constraint`, only a violation of that constraint.
 */
export function isUniqueViolation(
  error: unknown,
  constraint?: string,
): error is { code: '23505'; constraint?: string } {
  if (typeof error !== 'object' || error === null) return false;
  const fields = error as { code?: unknown; constraint?: unknown };
  return fields.code === '23505' && (constraint === undefined || fields.constraint === constraint);
}
