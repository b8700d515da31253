import { z } from 'zod';
import type { UserSession } from '@gateway/contracts';
import { requestContextOf } from '../auth/authentication.js';
import { defineOperation, type AnyOperation } from '../http/operation.js';
import { adminErrorResponses, json, userErrorResponses } from './openapi-responses.js';
import { UserIdParams } from './user-admin-routes.js';

// The signed-in user's own gateway sessions, and an admin's view of a user's (spec 2.7, 3.3).
// Only live sessions are listed or ended, and only the named user's; no token or token hash
// is ever answered.

const timestamp = z.iso.datetime({ offset: true });

const sessionFields = {
  id: z.uuid(),
  platform: z
    .object({
      key: z.string(),
      name: z
        .string()
        .describe('The platform’s display name; its key when the registry has no such platform.'),
    })
    .nullable()
    .describe(
      'The platform whose login created the session; null for one signed in at the gateway.',
    ),
  environment: z.object({ key: z.string(), tier: z.string() }),
  createdAt: timestamp,
  expiresAt: timestamp,
};

export const UserSessionJson = z.object(sessionFields).strict().meta({ id: 'UserSession' });

export const AccountSessionJson = z
  .object({
    ...sessionFields,
    current: z
      .boolean()
      .describe(
        'True for the session whose cookie made this request; always false with a bearer token.',
      ),
  })
  .strict()
  .meta({ id: 'AccountSession' });

export const AccountSessionListJson = z
  .object({ items: z.array(AccountSessionJson) })
  .meta({ id: 'AccountSessionList' });

export const UserSessionListJson = z
  .object({ items: z.array(UserSessionJson) })
  .meta({ id: 'UserSessionList' });

export const RevokedAccountSessionsJson = z
  .object({ revokedSessions: z.number().int().describe('How many live sessions were ended.') })
  .meta({ id: 'RevokedAccountSessions' });

const SessionIdParams = z.object({ sessionId: z.uuid() }).strict();
const UserSessionParams = z.object({ userId: z.uuid(), sessionId: z.uuid() }).strict();

export const RevokeOtherSessionsQuery = z
  .object({
    except: z
      .literal('current')
      .describe(
        'Required: `current`, the session that stays (the cookie’s; with a bearer token none does).',
      ),
  })
  .strict();

export function toUserSessionJson(session: UserSession): z.infer<typeof UserSessionJson> {
  const { platform, environment } = session;
  if (environment === undefined)
    throw new Error('auth-flow answered a session without environment');
  return {
    id: session.id,
    platform: platform === undefined ? null : { key: platform.key, name: platform.name },
    environment: { key: environment.key, tier: environment.tier },
    createdAt: session.createdAt,
    expiresAt: session.expiresAt,
  };
}

const USER = { kind: 'user' } as const;
const PLATFORMS_ADMIN = { kind: 'admin', permission: 'platforms:admin' } as const;

const listMySessions = defineOperation({
  auth: USER,
  response: { kind: 'json', status: 200 },
  operationId: 'listMySessions',
  method: 'get',
  path: '/v1/account/sessions',
  summary: 'The signed-in user’s live gateway sessions, newest first.',
  description:
    'Every live (not ended, not expired) session of the caller, with the platform it was ' +
    'signed in from; `current` marks the one whose cookie made the request.',
  tags: ['Account'],
  responses: {
    200: json('The sessions.', AccountSessionListJson),
    ...userErrorResponses(),
  },
  handler: async ({ caller, services }) => {
    const answer = await services.clients.authFlow.listAccountSessions({ userId: caller.userId });
    const currentId = caller.via === 'cookie' ? caller.sessionId : undefined;
    return {
      items: answer.items.map((session) => ({
        ...toUserSessionJson(session),
        current: session.id === currentId,
      })),
    };
  },
});

const revokeMySession = defineOperation({
  auth: USER,
  response: { kind: 'no-content' },
  operationId: 'revokeMySession',
  method: 'delete',
  path: '/v1/account/sessions/:sessionId',
  summary: 'End one of the signed-in user’s gateway sessions.',
  description:
    'Platforms see the session as `active: false` at their next introspection. 404 ' +
    '`NOT_FOUND` when the id names no live session of the caller. Ending the session of the ' +
    'request’s own cookie also clears the cookie. A cookie-authenticated call needs an ' +
    'allowlisted `Origin`.',
  tags: ['Account'],
  params: SessionIdParams,
  responses: {
    204: {
      description: 'The session is ended.',
      headers: {
        'Set-Cookie': {
          description:
            'Clears `svc_auth_session` (`Max-Age=0`) when the cookie’s own session ended.',
          schema: { type: 'string' },
        },
      },
    },
    ...userErrorResponses(400, 404),
  },
  handler: async ({ caller, params, services, sessionCookie }) => {
    await services.clients.authFlow.revokeAccountSession({
      userId: caller.userId,
      sessionId: params.sessionId,
    });
    if (caller.via === 'cookie' && caller.sessionId === params.sessionId) sessionCookie.clear();
  },
});

const revokeMyOtherSessions = defineOperation({
  auth: USER,
  response: { kind: 'json', status: 200 },
  operationId: 'revokeMyOtherSessions',
  method: 'delete',
  path: '/v1/account/sessions',
  summary: 'End every other gateway session of the signed-in user.',
  description:
    'Ends every live session of the caller but the one whose cookie made the request (with ' +
    'a bearer token: all of them). `except=current` is required. A cookie-authenticated call ' +
    'needs an allowlisted `Origin`.',
  tags: ['Account'],
  query: RevokeOtherSessionsQuery,
  responses: {
    200: json('How many sessions were ended.', RevokedAccountSessionsJson),
    ...userErrorResponses(400),
  },
  handler: async ({ caller, services }) => {
    const answer = await services.clients.authFlow.revokeOtherAccountSessions({
      userId: caller.userId,
      ...(caller.via === 'cookie' && caller.sessionId !== undefined
        ? { keepSessionId: caller.sessionId }
        : {}),
    });
    return { revokedSessions: answer.revokedSessions };
  },
});

const listUserSessions = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'json', status: 200 },
  operationId: 'listUserSessions',
  method: 'get',
  path: '/v1/admin/users/:userId/sessions',
  summary: 'A user’s live gateway sessions, newest first.',
  description:
    'To end one: `DELETE /v1/admin/users/{userId}/sessions/{sessionId}`; to end all: ' +
    '`POST /v1/admin/users/{userId}/sessions/revoke`.',
  tags: ['Users'],
  params: UserIdParams,
  responses: {
    200: json('The sessions.', UserSessionListJson),
    ...adminErrorResponses(404),
  },
  handler: async ({ params, services }) => {
    const answer = await services.clients.authFlow.listUserSessions({ userId: params.userId });
    return { items: answer.items.map(toUserSessionJson) };
  },
});

const revokeUserSession = defineOperation({
  auth: PLATFORMS_ADMIN,
  response: { kind: 'no-content' },
  operationId: 'revokeUserSession',
  method: 'delete',
  path: '/v1/admin/users/:userId/sessions/:sessionId',
  summary: 'End one gateway session of a user.',
  description:
    'Audited (`user_session.revoked`). Platforms see the session as `active: false` at their ' +
    'next introspection. 404 `NOT_FOUND` for an unknown user, and when the id names no live ' +
    'session of that user.',
  tags: ['Users'],
  params: UserSessionParams,
  responses: { 204: { description: 'The session is ended.' }, ...adminErrorResponses(404) },
  handler: async ({ params, caller, requestId, services }) => {
    await services.clients.authFlow.revokeUserSession({
      context: requestContextOf(caller, requestId),
      userId: params.userId,
      sessionId: params.sessionId,
    });
  },
});

/** The signed-in user's own sessions. */
export const accountSessionOperations: readonly AnyOperation[] = [
  listMySessions,
  revokeMySession,
  revokeMyOtherSessions,
];

/** The admin's view of a user's sessions (ending all of them is user-admin-routes.ts's). */
export const adminSessionOperations: readonly AnyOperation[] = [
  listUserSessions,
  revokeUserSession,
];
