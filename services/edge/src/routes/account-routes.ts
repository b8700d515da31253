import type { Router } from 'express';
import { z } from 'zod';
import type { Account } from '@gateway/contracts';
import { getUserCaller, type UserAuthentication } from '../auth/user-authentication.js';
import type { OperationCatalog } from '../http/operation-catalog.js';
import { clearSessionCookie, type CookieOptions } from '../http/session-cookie.js';
import type { EdgeClients } from '../service-clients.js';
import { json, sendJson } from './admin-operation.js';
import { defineUserOperation, userErrorResponses } from './user-operation.js';

// Spec 2.5 and 4.8: the signed-in user's own account.

export type AccountRouteOptions = {
  clients: Pick<EdgeClients, 'authFlow'>;
  userAuthentication: UserAuthentication;
  /** NODE_ENV is production: the session cookie is `Secure` (spec 4.2 step 7). */
  secureCookies: boolean;
};

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
