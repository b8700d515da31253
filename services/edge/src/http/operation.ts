import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import { GatewayError } from '@gateway/errors';
import type { Permission, Principal } from '../auth/principal.js';
import type { UserCaller } from '../auth/user-authentication.js';
import type { IdentityIssuerCheck } from '../identity-issuer-check.js';
import type { EdgeClients } from '../service-clients.js';
import type { PlatformCaller, PlatformCredentialKind } from './basic-credentials.js';
import type { ErrorPageOptions } from './error-page.js';
import type { LimitedOperation } from './rate-limit.js';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type ObjectSchema = z.ZodType<Record<string, unknown>>;

/**
 * Who may call an operation (spec 5). The runner authenticates before it validates, so a
 * caller without credentials learns nothing about validation and a refused one never reaches
 * a service.
 */
export type OperationAuth =
  | { kind: 'public' }
  /** platformBasicAuth with a key of these kinds (403 for another kind). */
  | { kind: 'platform'; accept: readonly PlatformCredentialKind[] }
  /** A machine token, a user token or the cookie of a caller holding `permission`. */
  | { kind: 'admin'; permission: Permission }
  /** Spec 4.13: the onboarding schema of the platform named by the `platformKey` parameter. */
  | { kind: 'platform-schema'; access: 'read' | 'write' }
  /** Spec 4.13: the global onboarding fields (`platforms:admin` and the scope). */
  | { kind: 'global-schema'; access: 'read' | 'write' }
  /** The signed-in user: a user token or the cookie (machine tokens 403). */
  | { kind: 'user' }
  /**
   * gatewayCookieAuth on its own (resume, logout): a read needs the cookie (401); a write
   * needs an allowlisted Origin and takes the cookie when there is one.
   */
  | { kind: 'cookie' };

/** The caller of a cookie operation: the session token, as the cookie carries it. */
export type CookieCaller = { sessionToken: string | undefined };

export type CallerOf<A extends OperationAuth> = A extends { kind: 'platform' }
  ? PlatformCaller
  : A extends { kind: 'admin' | 'platform-schema' | 'global-schema' }
    ? Principal
    : A extends { kind: 'user' }
      ? UserCaller
      : A extends { kind: 'cookie' }
        ? CookieCaller
        : undefined;

/**
 * How the runner writes a successful answer. Every policy but `immutable-image` is never
 * stored by a cache (cache-policy.ts), set before the first step so error answers carry it too.
 */
export type ResponsePolicy =
  | { kind: 'json'; status: 200 | 201 }
  | { kind: 'no-content' }
  /** 200 without a body (a back-channel logout answer: the protocol asks for 200, not 204). */
  | { kind: 'empty' }
  /** 302 to the URL the handler answers (only absolute http(s)), for browser navigations. */
  | { kind: 'browser-redirect' }
  /** A stored image, public and immutable (a new image gets a new URL). */
  | { kind: 'immutable-image' };

export type StoredImage = { contentType: string; data: Uint8Array };

export type OutputOf<R extends ResponsePolicy> = R extends { kind: 'json' }
  ? unknown
  : R extends { kind: 'browser-redirect' }
    ? string
    : R extends { kind: 'immutable-image' }
      ? StoredImage
      : void;

/**
 * How an operation's `body` arrives: JSON (spec 7, every operation of the spec), or an HTML
 * form (`application/x-www-form-urlencoded`, what an identity provider posts a logout token
 * as). A form's fields reach the body schema as strings, a repeated field as an array.
 */
export type BodyEncoding = 'json' | 'form';

/**
 * The shape of an operation's error answers: the spec's `{ code, message, details? }`
 * (section 7), or OAuth 2.0's `{ error, error_description }` (RFC 6749 5.2) for an endpoint an
 * identity provider calls under a protocol of its own (Back-Channel Logout 1.0, 2.8).
 */
export type ErrorBodyFormat = 'gateway' | 'oauth';

/** A body that is not JSON (the avatar upload): read by the runner, checked by type and size. */
export type RawBodySpec = {
  mediaTypes: readonly string[];
  limitBytes: number;
  /** Its OpenAPI description. */
  openApi: NonNullable<RouteConfig['request']>['body'];
};

export type RawBody = { mediaType: string; data: Buffer };

/** Changes to `svc_auth_session`, written with the answer (or with the error, after a failure). */
export type SessionCookieChanges = {
  set(token: string, expiresAt: string): void;
  clear(): void;
};

/** What handlers work with: the service clients and the edge's own settings. */
export type EdgeServices = {
  clients: EdgeClients;
  /** `{base_url}` (spec 2.15): upload and avatar URLs are absolute. */
  baseUrl: string;
  /** How long readiness waits for each service. */
  probeTimeoutMs: number;
  /** Whether the deployment identity issuer answers, for readiness's details. */
  identityIssuer?: IdentityIssuerCheck;
};

export type OperationInput<
  Q extends ObjectSchema | undefined,
  P extends ObjectSchema | undefined,
  B extends z.ZodType | undefined,
  A extends OperationAuth,
> = {
  query: Q extends z.ZodType ? z.output<Q> : undefined;
  params: P extends z.ZodType ? z.output<P> : undefined;
  body: B extends z.ZodType ? z.output<B> : undefined;
  /** The body of an operation with `rawBody`. */
  raw: RawBody | undefined;
  caller: CallerOf<A>;
  requestId: string;
  sessionCookie: SessionCookieChanges;
  services: EdgeServices;
};

/** What an operation's `afterFailure` knows of the failed request. */
export type FailureContext = {
  /** Whether the handler ran (and so asked its service) before the failure. */
  handlerStarted: boolean;
  sessionToken: string | undefined;
  sessionCookie: SessionCookieChanges;
  services: EdgeServices;
};

/**
 * One operation of the public contract: its OpenAPI description, authentication, limits,
 * response policy and handler, declared together from the same zod schemas, so
 * `/openapi.json` cannot drift from what the edge accepts. Spec section 4 gives every
 * operation a stable operationId; it names the request's trace span too. The runner
 * (operation-runner.ts) serves every operation through the same steps.
 */
export type Operation<
  Q extends ObjectSchema | undefined,
  P extends ObjectSchema | undefined,
  B extends z.ZodType | undefined,
  A extends OperationAuth,
  R extends ResponsePolicy,
> = {
  operationId: string;
  method: Method;
  /** Express-style path, e.g. `/v1/platforms/:platformKey`. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: A;
  query?: Q;
  params?: P;
  body?: B;
  /** How `body` is encoded (default `json`). */
  bodyEncoding?: BodyEncoding;
  /** Largest accepted JSON body in bytes (default 64 KiB). */
  bodyLimitBytes?: number;
  rawBody?: RawBodySpec;
  /** The rate limits that count this operation (rate-limit.ts). */
  rateLimit?: LimitedOperation;
  /**
   * Refused with 503 at once while the edge is at its bound of such requests in flight
   * (load-shedding.ts): for operations that wait on nothing slow.
   */
  sheddable?: boolean;
  response: R;
  responses: RouteConfig['responses'];
  /** The shape of the error answers (default `gateway`, the spec's). */
  errorBody?: ErrorBodyFormat;
  handler(input: OperationInput<Q, P, B, A>): Promise<OutputOf<R>>;
  /**
   * Runs after a failure of any step past the Origin check, before the error is answered;
   * answers the error to write (the same one, or one that matters more).
   */
  afterFailure?(failure: unknown, context: FailureContext): Promise<unknown>;
  /**
   * The links of this operation's error page (error-page.ts), in place of the edge's, for a
   * browser refused with a 4xx other than 429; `query` is the request's query string. Never
   * throws: what it cannot find, it leaves out.
   */
  errorPage?(query: string, services: EdgeServices): Promise<ErrorPageOptions>;
};

// Operations of different schemas in one list: each is only ever run with its own input.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyOperation = Operation<any, any, any, OperationAuth, ResponsePolicy>;

/** Declares an operation; its handler's input is typed from its schemas and auth. */
export function defineOperation<
  A extends OperationAuth,
  R extends ResponsePolicy,
  Q extends ObjectSchema | undefined = undefined,
  P extends ObjectSchema | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(operation: Operation<Q, P, B, A, R>): AnyOperation {
  return operation as unknown as AnyOperation;
}

export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** Spec 5: the OpenAPI security of each kind of authentication. */
export function securityOf(auth: OperationAuth): NonNullable<RouteConfig['security']> {
  switch (auth.kind) {
    case 'public':
      return [];
    case 'platform':
      return [{ platformBasicAuth: [] }];
    case 'user':
      return [{ userBearerAuth: [] }, { gatewayCookieAuth: [] }];
    case 'cookie':
      return [{ gatewayCookieAuth: [] }];
    default:
      return [{ serviceBearerAuth: [] }, { userBearerAuth: [] }, { gatewayCookieAuth: [] }];
  }
}

/** Validates one part of a request; a failure is 400 VALIDATION_ERROR naming each issue. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  location: string,
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new GatewayError('VALIDATION_ERROR', `Invalid request ${location}.`, {
    details: {
      issues: result.error.issues.map((issue) => ({
        location,
        path: issue.path.map(String).join('.'),
        message: issue.message,
      })),
    },
  });
}
