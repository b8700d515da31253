import type { RequestHandler, Router } from 'express';
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { Account } from '@gateway/contracts';
import { setHttpSpanName } from '@gateway/telemetry';
import { getUserCaller, type UserAuthentication } from '../auth/user-authentication.js';
import { defineOperation, type OperationDefinition } from '../http/operation.js';
import { ErrorBodySchema, type OperationCatalog } from '../http/operation-catalog.js';
import { clearSessionCookie, type CookieOptions } from '../http/session-cookie.js';
import type { EdgeClients } from '../service-clients.js';
import { json, sendJson } from './admin-operation.js';

// Spec 2.5 and 4.8: the signed-in user's own account.

type ObjectSchema = z.ZodType<Record<string, unknown>>;

export type AccountRouteOptions = {
  clients: Pick<EdgeClients, 'authFlow'>;
  userAuthentication: UserAuthentication;
  /** NODE_ENV is production: the session cookie is `Secure` (spec 4.2 step 7). */
  secureCookies: boolean;
};

/** Spec 5: user routes take a user token or the gateway cookie. */
export const USER_SECURITY: NonNullable<RouteConfig['security']> = [
  { userBearerAuth: [] },
  { gatewayCookieAuth: [] },
];

export const AccountJson = z
  .object({
    id: z.uuid(),
    issuer: z.string(),
    subject: z.string(),
    environment: z.object({ key: z.string(), tier: z.string() }),
    email: z.string(),
    emailVerified: z.boolean(),
    status: z.enum(['ACTIVE', 'SOFT_DELETED', 'SUSPENDED']),
    accountManagementUrl: z
      .string()
      .describe('The identity account page (issuer origin + `/account`).'),
  })
  .strict()
  .meta({ id: 'Account' });

export function toAccountJson(account: Account | undefined): z.infer<typeof AccountJson> {
  if (account === undefined) throw new Error('auth-flow answered no account');
  const environment = account.environment;
  if (environment === undefined) throw new Error('auth-flow answered no environment');
  return {
    id: account.id,
    issuer: account.issuer,
    subject: account.subject,
    environment: { key: environment.key, tier: environment.tier },
    email: account.email,
    emailVerified: account.emailVerified,
    status: account.status as z.infer<typeof AccountJson>['status'],
    accountManagementUrl: account.accountManagementUrl,
  };
}

const errorDescriptions = {
  401: 'Missing or invalid credentials, or no live session (UNAUTHORIZED).',
  403: 'A machine token, a blocked account, or a cookie write without an allowlisted Origin (FORBIDDEN).',
  503: 'A gateway service or the identity service is unavailable.',
} as const;

function userErrorResponses(): RouteConfig['responses'] {
  return Object.fromEntries(
    Object.entries(errorDescriptions).map(([status, description]) => [
      status,
      { description, content: { 'application/json': { schema: ErrorBodySchema } } },
    ]),
  );
}

/**
 * An operation behind `requireUser`: the caller is authenticated before anything else is
 * read, and described with the user security schemes.
 */
function defineUserOperation<
  Q extends ObjectSchema | undefined = undefined,
  P extends ObjectSchema | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(
  router: Router,
  catalog: OperationCatalog,
  userAuthentication: UserAuthentication,
  operation: OperationDefinition<Q, P, B>,
): void {
  const nameSpan: RequestHandler = function nameOperationSpan(_req, res, next) {
    setHttpSpanName(res, operation.operationId);
    res.setHeader('Cache-Control', 'no-store');
    next();
  };
  router[operation.method](operation.path, nameSpan, userAuthentication.requireUser);
  defineOperation(router, catalog, { security: USER_SECURITY, ...operation });
}

export function registerAccountRoutes(
  router: Router,
  catalog: OperationCatalog,
  options: AccountRouteOptions,
): void {
  const { authFlow } = options.clients;
  const cookie: CookieOptions = { secure: options.secureCookies };
  const tags = ['Account'];

  defineUserOperation(router, catalog, options.userAuthentication, {
    operationId: 'getMyIdentity',
    method: 'get',
    path: '/v1/account/me',
    summary: 'The signed-in user’s account.',
    description:
      'The local account view; no identity service call. Password changes and sign-in ' +
      'methods are managed at `accountManagementUrl`.',
    tags,
    responses: { 200: json('The account.', AccountJson), ...userErrorResponses() },
    handler: async (_input, _req, res) => {
      const answer = await authFlow.getAccount({ userId: getUserCaller(res).userId });
      sendJson(res, 200, toAccountJson(answer.account));
    },
  });

  defineUserOperation(router, catalog, options.userAuthentication, {
    operationId: 'deleteMyAccount',
    method: 'delete',
    path: '/v1/account/me',
    summary: 'Delete the signed-in user’s account.',
    description:
      'Suspends the identity account through the identity service API first, then marks the ' +
      'local user deleted and revokes all of its gateway sessions; the cookie is cleared when ' +
      'the request used it. A cookie-authenticated call needs an allowlisted `Origin`. When ' +
      'the identity service fails: 503 `IDENTITY_UNAVAILABLE` and nothing changes.',
    tags,
    responses: {
      204: {
        description: 'The account is deleted.',
        headers: {
          'Set-Cookie': {
            description: 'Clears `svc_auth_session` (`Max-Age=0`) when cookie-authenticated.',
            schema: { type: 'string' },
          },
        },
      },
      ...userErrorResponses(),
    },
    handler: async (_input, _req, res) => {
      const caller = getUserCaller(res);
      await authFlow.deleteAccount({ userId: caller.userId });
      if (caller.via === 'cookie') clearSessionCookie(res, cookie);
      res.status(204).end();
    },
  });
}
