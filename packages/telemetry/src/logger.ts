import { hostname } from 'node:os';
import { pino } from 'pino';
import type { DestinationStream, Logger, LoggerOptions } from 'pino';
import { activeTraceFields } from './active-trace-fields.js';

export type { Logger } from 'pino';

export interface LoggerCreateOptions {
  /** Written on every line as `service`. */
  service: string;
  /** pino level name; `info` unless given. */
  level?: string;
  /** Where lines go; stdout unless given (tests pass a memory stream). */
  destination?: DestinationStream;
}

/** The censor written in place of every redacted value. */
export const REDACTED = '[redacted]';

/** Field names that carry secrets wherever they appear (top level or one object down). */
const SECRET_FIELD_NAMES = [
  'password',
  'clientSecret',
  'client_secret',
  'gatewayToken',
  'token',
  'code',
  'state',
  'nonce',
  'id_token',
  'idToken',
  'secret',
] as const;

/**
 * Paths pino censors. Nothing secret is logged (architecture: Secrets): credentials in
 * headers, and the bearer-like values of the login flow under the names listed above.
 * pino's wildcard matches one level, so `*.token` covers `{ session: { token } }`; the
 * top-level names are added for `logger.info({ token })`. Deeper nesting is not covered:
 * log identifiers, never whole payloads.
 */
export const REDACTED_PATHS: readonly string[] = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  ...SECRET_FIELD_NAMES,
  ...SECRET_FIELD_NAMES.map((name) => `*.${name}`),
];

/**
 * A pino logger whose lines carry `service`, and `trace_id` / `span_id` / `trace_flags`
 * of the active span, with secrets censored as `[redacted]`.
 */
export function createLogger(options: LoggerCreateOptions): Logger {
  const loggerOptions: LoggerOptions = {
    level: options.level ?? 'info',
    base: { service: options.service, pid: process.pid, hostname: hostname() },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin: activeTraceFields,
    redact: { paths: [...REDACTED_PATHS], censor: REDACTED },
  };
  return options.destination === undefined
    ? pino(loggerOptions)
    : pino(loggerOptions, options.destination);
}
