import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import { fromConnectError, GatewayError } from '@gateway/errors';
import { gatewayMetrics, type Logger } from '@gateway/telemetry';
import type { Authentication } from '../auth/authentication.js';
import {
  presentedClientIdOf,
  type FailedPlatformAuthentications,
} from '../auth/platform-authentication-failures.js';
import type {
  PlatformAuthenticationLimits,
  PlatformAuthenticationRefusal,
} from '../auth/platform-authentication-limits.js';
import type { UserAuthentication } from '../auth/user-authentication.js';
import {
  basicChallengeFor,
  requireCredentialKind,
  type PlatformCaller,
  type PlatformCredentialKind,
  type PlatformCredentialVerifier,
} from './basic-credentials.js';
import { setOperationCachePolicy } from './cache-policy.js';
import { writeErrorAnswer } from './error-handler.js';
import { wantsErrorPage, type ErrorPageOptions } from './error-page.js';
import { admissionCredentialOf, type LoadShedder } from './load-shedding.js';
import type {
  AnyOperation,
  CallerOf,
  EdgeServices,
  OperationAuth,
  ResponsePolicy,
  StoredImage,
} from './operation.js';
import { parseInput } from './operation.js';
import { assertAllowedOrigin, isCookieWrite, isCookieWriteOf } from './origin-check.js';
import { RateLimitedError, type RateLimiter } from './rate-limit.js';
import {
  FORM_MEDIA_TYPE,
  formOf,
  isJsonMediaType,
  JSON_BODY_LIMIT_BYTES,
  jsonOf,
  rawBodyRules,
  rawOf,
  receiveBody,
  type BodyRules,
  type ReceivedBody,
} from './request-body.js';
import type { RouteMatch } from './route-table.js';
import { setStoredImageHeaders } from './security-headers.js';
import {
  createSessionCookieChanges,
  readSessionToken,
  type CookieOptions,
} from './session-cookie.js';

export type OperationRunnerOptions = {
  services: EdgeServices;
  logger: Logger;
  limiter: RateLimiter;
  /** Bounds the sheddable operations in flight. */
  shedder: LoadShedder;
  credentials: PlatformCredentialVerifier;
  /** Counts refused platform credentials for the audit log (platform-authentication-failures.ts). */
  failedPlatformAuthentications?: FailedPlatformAuthentications;
  /** The back-off after failed platform authentications (platform-authentication-limits.ts). */
  platformAuthenticationLimits?: PlatformAuthenticationLimits;
  authentication: Authentication;
  userAuthentication: UserAuthentication;
  /** The CORS allowlist (spec 2.15), which is also the cookie-write Origin allowlist (5). */
  isAllowedOrigin: (origin: string) => Promise<boolean>;
  cookie: CookieOptions;
  /** The client's address, after trusted proxies. */
  clientAddress: (req: IncomingMessage) => string;
  /** For the error page a browser navigation may get (error-page.ts). */
  errorPage: ErrorPageOptions;
  /** How long a request body may take to arrive (request-body.ts BODY_DEADLINE_MS). */
  bodyDeadlineMs: number;
};

/** One request on its way through the edge (edge-server.ts made it). */
export type EdgeExchange = {
  req: IncomingMessage;
  res: ServerResponse;
  /** The path, without its query. */
  path: string;
  /** The query string, without `?`. */
  query: string;
  requestId: string;
  /** Writes the request's one log line when it is answered (idempotent). */
  log(): void;
};

export type OperationRunner = (match: RouteMatch, exchange: EdgeExchange) => Promise<void>;

type Stage = 'before-origin' | 'input' | 'rate-limit' | 'handler';

/**
 * The one way through the edge for every `/v1` operation, whatever the request carries.
 * Before it, edge-server.ts has set the security headers, the request id, the trace span
 * (named by operationId) and credentialed CORS. Then, in this order: the cache policy (so
 * error answers carry it too), the Origin check of cookie writes, the whole body (within the
 * body deadline), load-shedding admission (a slot is taken only once the body has arrived,
 * from the share of the caller's credential and address), rate limits, authentication (for
 * platform credentials that do not verify, the back-off decides between 401 and 429),
 * validation, the handler, and the answer its response policy describes; failures through
 * the one error writer (error-handler.ts). Every request gets one request log line, except
 * refused platform credentials: they are counted and written once per key and window.
 * A refusal must cost far less than an answer (load-shedding.ts): a request that cannot be
 * admitted when it arrives is refused by edge-server.ts before anything else is spent on it
 * (a cross-origin one here, once it has its CORS headers); admission itself comes after the
 * body (so a slow body holds no slot) and before the rate limits, which may be a round trip
 * to Redis.
 */
export function createOperationRunner(options: OperationRunnerOptions): OperationRunner {
  return (match, exchange) => runOperation(options, match, exchange);
}

async function runOperation(
  options: OperationRunnerOptions,
  { operation, params }: RouteMatch,
  exchange: EdgeExchange,
): Promise<void> {
  const { req, res } = exchange;
  setOperationCachePolicy(res, operation.response);
  const sessionCookie = createSessionCookieChanges();
  let stage: Stage = 'before-origin';
  const address = options.clientAddress(req);
  const credential = admissionCredentialOf(req);
  // A cross-origin request was not refused on arrival (edge-server.ts): here, with its CORS
  // headers, before its body is read.
  if (operation.sheddable === true && !options.shedder.mayAdmit(credential, address)) {
    options.shedder.refuse(res, operation.operationId);
    return;
  }
  try {
    if (isCookieWriteOf(operation.auth, req)) {
      await assertAllowedOrigin(req.headers.origin, options.isAllowedOrigin);
    }
    stage = 'input';
    const received = await receiveOperationBody(operation, req, options.bodyDeadlineMs);
    if (operation.sheddable === true && !options.shedder.admit(res, credential, address)) {
      options.shedder.refuse(res, operation.operationId);
      return;
    }
    if (operation.rateLimit !== undefined) {
      stage = 'rate-limit';
      await options.limiter.check(operation.rateLimit, req, address);
      stage = 'input';
    }
    const caller = await authenticate(options, operation.auth, exchange, address, params);
    exchange.log();
    const input = {
      query: operation.query
        ? parseInput(operation.query, parseQuery(exchange), 'query')
        : undefined,
      params: operation.params ? parseInput(operation.params, params, 'path') : undefined,
      body: operation.body
        ? parseInput(operation.body, bodyValueOf(operation, received), 'body')
        : undefined,
      raw: operation.rawBody ? rawOf(received, operation.rawBody) : undefined,
      caller,
      requestId: exchange.requestId,
      sessionCookie,
      services: options.services,
    };
    stage = 'handler';
    const output = await operation.handler(input);
    writeAnswer(res, operation.response, output, () => sessionCookie.writeTo(res, options.cookie));
  } catch (error) {
    // Refused platform credentials get no request log line each: they are counted, and
    // logged and audited once per key and window (platform-authentication-failures.ts).
    if (!isPlatformAuthenticationRefusal(error)) exchange.log();
    await answerFailure(options, operation, exchange, error, { stage, sessionCookie });
  }
}

async function authenticate(
  options: OperationRunnerOptions,
  auth: OperationAuth,
  { req, res }: EdgeExchange,
  address: string,
  params: Record<string, string>,
): Promise<CallerOf<OperationAuth>> {
  switch (auth.kind) {
    case 'public':
      return undefined;
    case 'platform':
      return verifyPlatformCaller(options.credentials, req, res, auth.accept, () =>
        countPlatformAuthenticationFailure(options, req, address),
      );
    case 'admin':
      return options.authentication.requirePermission(req, res, auth.permission);
    case 'platform-schema':
      return options.authentication.requireSchemaPermission(req, res, auth.access, params);
    case 'global-schema':
      return options.authentication.requireGlobalSchemaPermission(req, res, auth.access);
    case 'user':
      return options.userAuthentication.requireUser(req, res);
    case 'cookie':
      return { sessionToken: requireSessionCookieOf(req) };
  }
}

/**
 * Marks the refusal of platform credentials that did not verify (401, or 429 in the
 * back-off): the answer the spec defines, without a request log line of its own.
 */
class PlatformAuthenticationRefused extends GatewayError {}

/** A 429 of the back-off, with the RATE_LIMITED body and Retry-After of every 429. */
class PlatformAuthenticationLimited extends RateLimitedError {}

function isPlatformAuthenticationRefusal(error: unknown): boolean {
  return (
    error instanceof PlatformAuthenticationRefused || error instanceof PlatformAuthenticationLimited
  );
}

/**
 * Counts credentials that did not verify: against the back-off of their address and client
 * id (platform-authentication-limits.ts), in the audit log and in the metric. The refusal
 * when the back-off answers 429 for it, else undefined (401).
 */
function countPlatformAuthenticationFailure(
  options: OperationRunnerOptions,
  req: IncomingMessage,
  address: string,
): PlatformAuthenticationRefusal | undefined {
  const clientId = presentedClientIdOf(req.headers.authorization);
  const refusal = options.platformAuthenticationLimits?.recordFailure(address, clientId);
  options.failedPlatformAuthentications?.recordFailedPlatformAuthentication({
    clientId,
    address,
    ...(refusal === undefined ? {} : { limited: true }),
  });
  gatewayMetrics.recordPlatformAuthenticationFailure(
    refusal === undefined
      ? 'unauthorized'
      : refusal.limit === 'address'
        ? 'limited_address'
        : 'limited_client_id',
  );
  return refusal;
}

/**
 * platformBasicAuth: 401 with the Basic challenge (spec 4.4, 7), or 429 once the back-off
 * answers for credentials that did not verify; 403 for a kind the operation refuses.
 */
async function verifyPlatformCaller(
  credentials: PlatformCredentialVerifier,
  req: IncomingMessage,
  res: ServerResponse,
  accept: readonly PlatformCredentialKind[],
  onRefused: () => PlatformAuthenticationRefusal | undefined,
): Promise<PlatformCaller> {
  let caller: PlatformCaller;
  try {
    caller = await credentials.verify(req.headers.authorization);
  } catch (error) {
    const failure = fromConnectError(error);
    const challenge = basicChallengeFor(failure);
    if (challenge === undefined) throw failure;
    const refusal = onRefused();
    if (refusal !== undefined) throw new PlatformAuthenticationLimited(refusal.retryAfterSeconds);
    res.setHeader('WWW-Authenticate', challenge);
    throw new PlatformAuthenticationRefused(failure.code, failure.message);
  }
  requireCredentialKind(caller, accept);
  return caller;
}

async function answerFailure(
  options: OperationRunnerOptions,
  operation: AnyOperation,
  exchange: EdgeExchange,
  error: unknown,
  state: { stage: Stage; sessionCookie: ReturnType<typeof createSessionCookieChanges> },
): Promise<void> {
  const { req, res, path } = exchange;
  let failure = error;
  state.sessionCookie.discard();
  // A request refused before its Origin was checked, or by a rate limit, leaves no trace.
  const refusedEarly = state.stage === 'before-origin' || state.stage === 'rate-limit';
  if (!refusedEarly && operation.afterFailure !== undefined) {
    failure = await operation.afterFailure(error, {
      handlerStarted: state.stage === 'handler',
      sessionToken: readSessionToken(req),
      sessionCookie: state.sessionCookie,
      services: options.services,
    });
  }
  if (res.headersSent) {
    options.logger.error({ err: failure, path }, 'request failed after its answer started');
    res.destroy();
    return;
  }
  state.sessionCookie.writeTo(res, options.cookie);
  const page = wantsErrorPage(req, path)
    ? await errorPageOf(options, operation, exchange, failure, refusedEarly)
    : undefined;
  writeErrorAnswer(res, failure, options.logger, path, page, operation.errorBody);
}

/**
 * The links of an error page: the edge's, or the operation's own. Those are looked up only
 * for a refusal of the request itself (a 4xx other than 429, past the rate limits), so that a
 * limited caller or a failing service costs no lookup; the page offers no link then.
 */
async function errorPageOf(
  options: OperationRunnerOptions,
  operation: AnyOperation,
  exchange: EdgeExchange,
  failure: unknown,
  refusedEarly: boolean,
): Promise<ErrorPageOptions> {
  if (operation.errorPage === undefined) return options.errorPage;
  const { status } = fromConnectError(failure);
  if (refusedEarly || status >= 500 || status === 429) return {};
  return operation.errorPage(exchange.query, options.services);
}

/**
 * gatewayCookieAuth of a cookie operation (spec 5): a read needs the cookie (401), checked
 * before the query; whether it names a live session of the right user is the service's
 * decision. A write (logout) passed the Origin check and takes the cookie when there is one.
 */
function requireSessionCookieOf(req: IncomingMessage): string | undefined {
  const token = readSessionToken(req);
  if (token === undefined && !isCookieWrite(req.method ?? 'GET')) {
    throw new GatewayError('UNAUTHORIZED', 'A gateway session cookie is required.');
  }
  return token;
}

// Express 5's "simple" query parser is node:querystring: the values operations always had.
function parseQuery(exchange: EdgeExchange): unknown {
  return parseQueryString(exchange.query);
}

const JSON_ONLY = 'The request body must be application/json.';
const FORM_ONLY = `The request body must be ${FORM_MEDIA_TYPE}.`;

function bodyRulesOf(operation: AnyOperation, deadlineMs: number): BodyRules | undefined {
  if (operation.rawBody !== undefined) return rawBodyRules(operation.rawBody, deadlineMs);
  if (operation.body === undefined) return undefined;
  const form = operation.bodyEncoding === 'form';
  return {
    limitBytes: operation.bodyLimitBytes ?? JSON_BODY_LIMIT_BYTES,
    deadlineMs,
    accepts: form ? (mediaType) => mediaType === FORM_MEDIA_TYPE : isJsonMediaType,
    unsupported: form ? FORM_ONLY : JSON_ONLY,
  };
}

/** The value the body schema validates: the JSON, or the form's fields. */
function bodyValueOf(operation: AnyOperation, received: ReceivedBody): unknown {
  return operation.bodyEncoding === 'form' ? formOf(received) : jsonOf(received);
}

/** The body of an operation that takes one; others leave it unread (node discards it). */
async function receiveOperationBody(
  operation: AnyOperation,
  req: IncomingMessage,
  deadlineMs: number,
): Promise<ReceivedBody> {
  const rules = bodyRulesOf(operation, deadlineMs);
  if (rules === undefined) return { kind: 'none', mediaType: '' };
  return receiveBody(req, rules);
}

/**
 * Writes a successful answer as the operation's response policy describes it; the session
 * cookie goes out with it (`writeCookie`), once the answer is known to be good.
 */
function writeAnswer(
  res: ServerResponse,
  policy: ResponsePolicy,
  output: unknown,
  writeCookie: () => void,
): void {
  switch (policy.kind) {
    case 'json': {
      const payload = JSON.stringify(output);
      writeCookie();
      res.statusCode = policy.status;
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Content-Length', Buffer.byteLength(payload));
      // Head and body in one write; `end(payload)` would cork the socket and add an empty
      // write (a writev of two) for the same bytes.
      res.write(payload);
      res.end();
      return;
    }
    case 'no-content':
      writeCookie();
      res.statusCode = 204;
      res.end();
      return;
    case 'empty':
      writeCookie();
      res.statusCode = 200;
      res.setHeader('Content-Length', 0);
      res.end();
      return;
    case 'browser-redirect': {
      const location = checkedRedirectUrl(output);
      writeCookie();
      res.statusCode = 302;
      res.setHeader('Location', location);
      res.end();
      return;
    }
    case 'immutable-image':
      writeStoredImage(res, output as StoredImage);
      return;
  }
}

function writeStoredImage(res: ServerResponse, image: StoredImage): void {
  setStoredImageHeaders(res);
  res.statusCode = 200;
  res.setHeader('Content-Type', image.contentType);
  res.setHeader('Content-Length', String(image.data.byteLength));
  res.end(Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength));
}

/**
 * A redirect target the auth-flow service built from the registry (spec 5: never from a
 * query parameter). Only an absolute http(s) URL is followed; anything else is a fault of
 * the service (500), not a redirect.
 */
export function checkedRedirectUrl(url: unknown): string {
  let protocol: string;
  try {
    protocol = new URL(String(url)).protocol;
  } catch {
    throw new Error('The auth-flow service answered a redirect that is not a URL');
  }
  if (protocol !== 'https:' && protocol !== 'http:') {
    throw new Error('The auth-flow service answered a redirect that is not http(s)');
  }
  return String(url);
}
