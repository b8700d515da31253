import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler, Router } from 'express';
import type { z } from 'zod';
import { fromConnectError } from '@gateway/errors';
import { setHttpSpanName } from '@gateway/telemetry';
import {
  basicChallengeFor,
  requireCredentialKind,
  type PlatformCaller,
  type PlatformCredentialKind,
  type PlatformCredentialVerifier,
} from './basic-credentials.js';
import { readJsonBody } from './json-body.js';
import { parseInput, type OperationDefinition } from './operation.js';
import type { OperationCatalog } from './operation-catalog.js';
import { setSessionCookie, type CookieOptions } from './session-cookie.js';

type ObjectSchema = z.ZodType<Record<string, unknown>>;

/** What a lean operation answers; the adapter writes it. */
export type LeanAnswer =
  | { kind: 'json'; body: unknown }
  | {
      kind: 'redirect';
      location: string;
      /** Sets `svc_auth_session` (spec 4.2 step 7). */
      session?: { token: string; expiresAt: string };
    };

/**
 * The headers an operation's every answer carries, errors included, set before anything is
 * checked: `no-store` for answers that carry secrets (exchange, introspect), and for browser
 * navigations that end in a redirect also no Referer from URLs that carry one-time values
 * (the callback's code and state).
 */
export type LeanHeaders = 'no-store' | 'browser-redirect';

/**
 * An operation of the login flow that platform backends and browsers call at volume (issue 8:
 * start, callback, exchange, introspect). Its rules live here once; two adapters serve it:
 * `registerLeanOperation` through Express (and the OpenAPI catalog), and the edge's fast lane
 * (fast-lane.ts) straight on node:http, which skips Express's per-request cost.
 */
export type LeanOperation<Q extends ObjectSchema | undefined, B extends z.ZodType | undefined> = {
  definition: Omit<OperationDefinition<Q, undefined, B>, 'handler' | 'params'>;
  headers: LeanHeaders;
  /** platformBasicAuth with these kinds, checked before the query or body is read. */
  credential?: readonly PlatformCredentialKind[];
  /**
   * Refused with 503 at once while the fast lane is at its bound of requests in flight
   * (load-shedding.ts): for operations that do not wait on anything slow.
   */
  sheddable?: boolean;
  handle(input: {
    query: Q extends z.ZodType ? z.output<Q> : undefined;
    body: B extends z.ZodType ? z.output<B> : undefined;
    caller: PlatformCaller | undefined;
  }): Promise<LeanAnswer>;
};

// Operations of different schemas in one list: each is only ever run with its own input.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyLeanOperation = LeanOperation<any, any>;

export type LeanContext = {
  credentials: PlatformCredentialVerifier;
  cookie: CookieOptions;
};

export function setLeanHeaders(res: ServerResponse, headers: LeanHeaders): void {
  res.setHeader('Cache-Control', 'no-store');
  if (headers === 'browser-redirect') res.setHeader('Referrer-Policy', 'no-referrer');
}

/**
 * Runs one operation on a request: credentials first (401 with the Basic challenge, 403 for
 * a kind the operation does not take), then query and body validation, then the handler.
 * `query` is the parsed query string.
 */
export async function runLeanOperation(
  operation: AnyLeanOperation,
  context: LeanContext,
  req: IncomingMessage,
  res: ServerResponse,
  query: unknown,
): Promise<void> {
  let caller: PlatformCaller | undefined;
  if (operation.credential !== undefined) {
    try {
      caller = await context.credentials.verify(req.headers.authorization);
    } catch (error) {
      const failure = fromConnectError(error);
      const challenge = basicChallengeFor(failure);
      if (challenge !== undefined) res.setHeader('WWW-Authenticate', challenge);
      throw failure;
    }
    requireCredentialKind(caller, operation.credential);
  }
  const { definition } = operation;
  const input = {
    query: definition.query ? parseInput(definition.query, query, 'query') : undefined,
    body: definition.body
      ? parseInput(
          definition.body,
          await readJsonBody(req, definition.bodyLimitBytes ?? 64 * 1024),
          'body',
        )
      : undefined,
    caller,
  };
  writeLeanAnswer(res, await operation.handle(input), context.cookie);
}

function writeLeanAnswer(res: ServerResponse, answer: LeanAnswer, cookie: CookieOptions): void {
  if (answer.kind === 'json') {
    const payload = JSON.stringify(answer.body);
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(payload));
    // Head and body in one write; `end(payload)` would cork the socket and add an empty
    // write (a writev of two) for the same bytes.
    res.write(payload);
    res.end();
    return;
  }
  const location = checkedRedirectUrl(answer.location);
  if (answer.session !== undefined) {
    setSessionCookie(res, answer.session.token, answer.session.expiresAt, cookie);
  }
  res.statusCode = 302;
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Location', location);
  res.end();
}

/**
 * A redirect target the auth-flow service built from the registry (spec 5: never from a
 * query parameter). Only an absolute http(s) URL is followed; anything else is a fault of
 * the service (500), not a redirect.
 */
export function checkedRedirectUrl(url: string): string {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new Error('The auth-flow service answered a redirect that is not a URL');
  }
  if (protocol !== 'https:' && protocol !== 'http:') {
    throw new Error('The auth-flow service answered a redirect that is not http(s)');
  }
  return url;
}

/**
 * Serves a lean operation through Express too (requests the fast lane leaves to Express, e.g.
 * those with an `Origin`), and describes it in /openapi.json.
 */
export function registerLeanOperation(
  router: Router,
  catalog: OperationCatalog,
  operation: AnyLeanOperation,
  context: LeanContext,
): void {
  const { definition } = operation;
  const prepare: RequestHandler = function prepareLeanOperation(_req, res, next) {
    setHttpSpanName(res, definition.operationId);
    setLeanHeaders(res, operation.headers);
    next();
  };
  const handle: RequestHandler = async function handleLeanOperation(req, res, next) {
    try {
      await runLeanOperation(operation, context, req, res, req.query);
    } catch (error) {
      next(error);
    }
  };
  catalog.add(definition);
  router[definition.method](definition.path, prepare, handle);
}
