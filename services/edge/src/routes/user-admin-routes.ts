import { z } from 'zod';
import { storedText } from '@gateway/field-rules';
import type { AdminUser } from '@gateway/contracts';
import { requestContextOf } from '../auth/authentication.js';
import { defineOperation, type AnyOperation } from '../http/operation.js';
import { adminErrorResponses, json } from './openapi-responses.js';

// Spec 4.12 user admin: the listing, the platform_admin role and session revocation.

const timestamp = z.iso.datetime({ offset: true });

export const ListUsersQuery = z
  .object({
    search: storedText()
      .min(1)
      .max(320)
      .optional()
      .describe('Case-insensitive substring of the e-mail address.'),
    page: z.coerce.number().int().min(1).max(1_000_000).default(1),
    pageSize: z.coerce.number().int().min(1).max(100).default(25),
    environmentKey: storedText().min(1).max(64).optional(),
  })
  .strict();

export const UserIdParams = z.object({ userId: z.uuid() }).strict();

export const AdminUserJson = z
  .object({
    id: z.uuid(),
    issuer: z.string(),
    subject: z.string(),
    environmentKey: z.string(),
    deploymentEnvironment: z.boolean(),
    email: z.string(),
    emailVerified: z.boolean(),
    status: z.enum(['ACTIVE', 'SOFT_DELETED', 'SUSPENDED']),
    roles: z.array(z.literal('platform_admin')).describe('`["platform_admin"]` or `[]`.'),
    lastLoginAt: timestamp.nullable(),
    createdAt: timestamp,
  })
  .meta({ id: 'AdminUser' });

export const AdminUserListJson = z
  .object({
    items: z.array(AdminUserJson),
    total: z.number().int(),
    page: z.number().int(),
    pageSize: z.number().int(),
  })
  .meta({ id: 'AdminUserList' });

export const RevokedUserSessionsJson = z
  .object({
    revokedGatewaySessions: z.number().int(),
    identitySessionsRevoked: z
      .boolean()
      .describe('False only when the identity service reports no such user.'),
  })
  .meta({ id: 'RevokedUserSessions' });

export function toAdminUserJson(user: AdminUser | undefined): z.infer<typeof AdminUserJson> {
  if (user === undefined) throw new Error('auth-flow answered no user');
  return {
    id: user.id,
    issuer: user.issuer,
    subject: user.subject,
    environmentKey: user.environmentKey,
    deploymentEnvironment: user.deploymentEnvironment,
    email: user.email,
    emailVerified: user.emailVerified,
    status: user.status as z.infer<typeof AdminUserJson>['status'],
    roles: user.roles.filter((role): role is 'platform_admin' => role === 'platform_admin'),
    lastLoginAt: user.lastLoginAt ?? null,
    createdAt: user.createdAt,
  };
}

const PLATFORMS_ADMIN = { kind: 'admin', permission: 'platforms:admin' } as const;
const tags = ['Users'];

const listUsers = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 200 },
  operationId: 'listUsers',
  method: 'get',
  path: '/v1/admin/users',
  summary: 'List local users, most recent login first.',
  description:
    'Filter by `search` (case-insensitive e-mail substring) and `environmentKey`. Ordered by ' +
    '`lastLoginAt` descending (never signed in last), then id.',
  tags,
  query: ListUsersQuery,
  responses: { 200: json('A page of users.', AdminUserListJson), ...adminErrorResponses() },
  handler: async ({ query, services }) => {
    const { authFlow } = services.clients;
    const answer = await authFlow.listUsers({
      ...(query.search === undefined ? {} : { search: query.search }),
      page: query.page,
      pageSize: query.pageSize,
      ...(query.environmentKey === undefined ? {} : { environmentKey: query.environmentKey }),
    });
    return {
      items: answer.items.map(toAdminUserJson),
      total: answer.total,
      page: answer.page,
      pageSize: answer.pageSize,
    };
  },
});

const grantPlatformAdmin = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 200 },
  operationId: 'grantPlatformAdmin',
  method: 'put',
  path: '/v1/admin/users/:userId/roles/platform_admin',
  summary: 'Grant platform_admin. Idempotent.',
  description:
    'Only for users of the deployment environment (409 ' +
    '`ROLE_REQUIRES_DEPLOYMENT_ENVIRONMENT`). Takes effect at the user’s next login.',
  tags,
  params: UserIdParams,
  responses: { 200: json('The user.', AdminUserJson), ...adminErrorResponses(404, 409) },
  handler: async ({ params, caller, requestId, services }) => {
    const { authFlow } = services.clients;
    const answer = await authFlow.grantPlatformAdmin({
      context: requestContextOf(caller, requestId),
      userId: params.userId,
    });
    return toAdminUserJson(answer.user);
  },
});

const revokePlatformAdmin = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 200 },
  operationId: 'revokePlatformAdmin',
  method: 'delete',
  path: '/v1/admin/users/:userId/roles/platform_admin',
  summary: 'Revoke platform_admin. Idempotent.',
  description:
    '409 `LAST_PLATFORM_ADMIN` for the last admin. The user’s live sessions lose their ' +
    'permissions at once.',
  tags,
  params: UserIdParams,
  responses: { 200: json('The user.', AdminUserJson), ...adminErrorResponses(404, 409) },
  handler: async ({ params, caller, requestId, services }) => {
    const { authFlow } = services.clients;
    const answer = await authFlow.revokePlatformAdmin({
      context: requestContextOf(caller, requestId),
      userId: params.userId,
    });
    return toAdminUserJson(answer.user);
  },
});

const revokeUserSessions = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 200 },
  operationId: 'revokeUserSessions',
  method: 'post',
  path: '/v1/admin/users/:userId/sessions/revoke',
  summary: 'Revoke every gateway session of a user, then its identity sessions.',
  description:
    'On an identity service failure: 503 `IDENTITY_UNAVAILABLE` or ' +
    '`IDENTITY_SERVICE_NOT_CONFIGURED` with `details.revokedGatewaySessions`.',
  tags,
  params: UserIdParams,
  responses: {
    200: json('What was revoked.', RevokedUserSessionsJson),
    ...adminErrorResponses(404),
  },
  handler: async ({ params, caller, requestId, services }) => {
    const { authFlow } = services.clients;
    const answer = await authFlow.revokeUserSessions({
      context: requestContextOf(caller, requestId),
      userId: params.userId,
    });
    return {
      revokedGatewaySessions: answer.revokedGatewaySessions,
      identitySessionsRevoked: answer.identitySessionsRevoked,
    };
  },
});

/** Spec 4.12: every user admin operation. */
export const userAdminOperations: readonly AnyOperation[] = [
  listUsers,
  grantPlatformAdmin,
  revokePlatformAdmin,
  revokeUserSessions,
];
