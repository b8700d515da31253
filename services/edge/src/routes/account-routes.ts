import { z } from 'zod';
import type { Account } from '@gateway/contracts';
import { defineOperation, type AnyOperation } from '../http/operation.js';
import { json, userErrorResponses } from './openapi-responses.js';

// Spec 2.5 and 4.8: the signed-in user's own account.

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

const USER = { kind: 'user' } as const;
const tags = ['Account'];

const getMyIdentity = defineOperation({
  auth: USER,
  response: { kind: 'json', status: 200 },
  operationId: 'getMyIdentity',
  method: 'get',
  path: '/v1/account/me',
  summary: 'The signed-in user’s account.',
  description:
    'The local account view; no identity service call. Password changes and sign-in ' +
    'methods are managed at `accountManagementUrl`.',
  tags,
  responses: { 200: json('The account.', AccountJson), ...userErrorResponses() },
  handler: async ({ caller, services }) => {
    const { authFlow } = services.clients;
    const answer = await authFlow.getAccount({ userId: caller.userId });
    return toAccountJson(answer.account);
  },
});

const deleteMyAccount = defineOperation({
  auth: USER,
  response: { kind: 'no-content' },
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
  handler: async ({ caller, services, sessionCookie }) => {
    await services.clients.authFlow.deleteAccount({ userId: caller.userId });
    if (caller.via === 'cookie') sessionCookie.clear();
  },
});

/** Spec 2.5 and 4.8: the signed-in user's own account. */
export const accountOperations: readonly AnyOperation[] = [getMyIdentity, deleteMyAccount];
