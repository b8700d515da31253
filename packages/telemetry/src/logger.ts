import { hostname } from 'node:os';
import { pino } from 'pino';
import type { DestinationStream, Logger, LoggerOptions } from 'pino';
import { isColorSupported, prettyFactory } from 'pino-pretty';
import { activeTraceFields } from './active-trace-fields.js';
import { serializeError } from './error-serializer.js';

export type { Logger } from 'pino';

export interface LoggerCreateOptions {
  /** Written on every line as `service`. */
  service: string;
  /** pino level name; `info` unless given. */
  level?: string;
  /** Where lines go; stdout unless given (tests pass a memory stream). */
  destination?: DestinationStream;
  /** `json` (the default) or `pretty`: lines for a person at a terminal (createPrettyDestination). */
  format?: LogFormat;
}

export type LogFormat = 'json' | 'pretty';

/**
 * LOG_FORMAT when set; otherwise `pretty` for a development process whose stdout is a
 * terminal, and JSON everywhere else (production, containers, pipes, tests).
 */
export function chooseLogFormat(options: {
  configured: LogFormat | undefined;
  nodeEnv: string;
  stdoutIsTerminal: boolean;
}): LogFormat {
  if (options.configured !== undefined) return options.configured;
  return options.nodeEnv === 'development' && options.stdoutIsTerminal ? 'pretty' : 'json';
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
  'state',
  'nonce',
  'id_token',
  'idToken',
  'secret',
] as const;

/**
 * Where an OAuth authorization code or a handoff code (`code`) can appear: at the top level,
 * in request data and in the fields named after it. `code` is not censored one level down
 * everywhere, because `err.code` is an error's code, which a line must show.
 */
const CODE_PATHS = [
  'code',
  'query.code',
  'body.code',
  'req.query.code',
  'req.body.code',
  'req.query.state',
  'req.body.state',
  'request.code',
  'authorizationCode',
  '*.authorizationCode',
  'handoffCode',
  '*.handoffCode',
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
  ...CODE_PATHS,
];

/** Pending bytes that make the stdout destination write at once. */
export const STDOUT_BATCH_BYTES = 4096;
/** The longest a line waits on stdout before it is written. */
export const STDOUT_FLUSH_INTERVAL_MS = 100;

/**
 * stdout in batches: lines are written once 4 KiB are pending or at the latest
 * after 100 ms, rather than one write (a thread-pool round trip) per line. Each write is
 * synchronous, so lines keep their order, also at exit, where what is pending is written
 * before the process ends (process.exit and an uncaught exception included). Only a process
 * killed outright (SIGKILL, the OOM killer) loses its last 100 ms of lines. One destination
 * per process, shared by every logger that writes to stdout.
 */
function createBatchedStdout(): DestinationStream {
  const stream = pino.destination({
    dest: process.stdout.fd,
    sync: true,
    minLength: STDOUT_BATCH_BYTES,
  });
  let pending = false;
  const flushPending = () => {
    if (!pending) return;
    pending = false;
    stream.flush();
  };
  setInterval(flushPending, STDOUT_FLUSH_INTERVAL_MS).unref();
  process.once('exit', () => stream.flushSync());
  return {
    write(line: string) {
      pending = true;
      stream.write(line);
    },
  };
}

let batchedStdout: DestinationStream | undefined;

/** Fields of the request lines (request-logging-middleware.ts). */
type RequestLine = { method: string; path: string; status?: number; durationMs?: number };

const isRequestLine = (
  entry: Record<string, unknown>,
): entry is Record<string, unknown> & RequestLine =>
  typeof entry.method === 'string' &&
  typeof entry.path === 'string' &&
  (entry.msg === 'request completed' || entry.msg === 'request aborted');

/**
 * Lines for a person at a terminal: time, level and message in colour, other fields on the
 * same line, without the fields every line repeats (pid, hostname, service, trace ids). A
 * request line shrinks to `GET /path 200 3 ms`; successful ones are shown only at `debug`
 * and `trace`, so a browser's requests do not push the start banner off the screen.
 */
export function createPrettyDestination(options: {
  level: string;
  write?: (text: string) => void;
  colorize?: boolean;
}): DestinationStream {
  const prettify = prettyFactory({
    colorize: options.colorize ?? (isColorSupported && process.stdout.isTTY === true),
    translateTime: 'HH:MM:ss',
    ignore: 'pid,hostname,service,trace_id,span_id,trace_flags',
    singleLine: true,
  });
  const showRequests = options.level === 'debug' || options.level === 'trace';
  const write = options.write ?? ((text: string) => void process.stdout.write(text));
  return {
    write(line: string) {
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (!isRequestLine(entry)) return write(prettify(entry));
      if (entry.level === 'info' && !showRequests) return;
      const { method, path, status, durationMs } = entry;
      const duration = durationMs === undefined ? '' : ` ${Math.round(durationMs)} ms`;
      const outcome = entry.msg === 'request aborted' ? 'aborted' : String(status);
      write(
        prettify({
          level: entry.level,
          time: entry.time,
          msg: `${method} ${path} ${outcome}${duration}`,
        }),
      );
    },
  };
}

/**
 * A pino logger whose lines carry `service`, and `trace_id` / `span_id` / `trace_flags`
 * of the active span, with secrets censored as `[redacted]`. Without a destination it writes
 * JSON to stdout in batches (createBatchedStdout), or, with format `pretty`, readable lines
 * to stdout as they come (createPrettyDestination).
 */
export function createLogger(options: LoggerCreateOptions): Logger {
  const loggerOptions: LoggerOptions = {
    level: options.level ?? 'info',
    base: { service: options.service, pid: process.pid, hostname: hostname() },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin: activeTraceFields,
    redact: { paths: [...REDACTED_PATHS], censor: REDACTED },
    serializers: { err: serializeError },
  };
  if (options.format === 'pretty') {
    const pretty = createPrettyDestination({ level: loggerOptions.level ?? 'info' });
    return pino(loggerOptions, options.destination ?? pretty);
  }
  return pino(loggerOptions, options.destination ?? (batchedStdout ??= createBatchedStdout()));
}
