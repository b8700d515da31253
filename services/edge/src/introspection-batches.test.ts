// The edge's split-mode auth-flow client: introspections of one turn go as one
// IntrospectSessions call, each caller getting its own answer or the call's error.
import { describe, expect, it } from '@jest/globals';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type Client } from '@connectrpc/connect';
import {
  IntrospectSessionResponseSchema,
  IntrospectSessionsResponseSchema,
  type AuthFlowService,
  type IntrospectSessionRequest,
  type SessionIntrospectionService,
} from '@gateway/contracts';
import { introspectingTogether } from './introspection-batches.js';

/** An answer that names the token it was asked about. */
const answerFor = (request: { token: string }) =>
  create(IntrospectSessionResponseSchema, { active: true, sessionId: `for-${request.token}` });

function fakeAuthFlow(options: { failBatches?: boolean } = {}) {
  const calls = { single: [] as string[], batches: [] as string[][] };
  const authFlow = {
    introspectSession: (request: IntrospectSessionRequest) => {
      calls.single.push(request.token);
      return Promise.resolve(answerFor(request));
    },
    getAccount: () => Promise.resolve({ user: undefined }),
  } as unknown as Client<typeof AuthFlowService>;
  const sessions = {
    introspectSessions: (request: { sessions: IntrospectSessionRequest[] }) => {
      calls.batches.push(request.sessions.map((session) => session.token));
      if (options.failBatches === true) {
        return Promise.reject(new ConnectError('auth-flow is down', Code.Unavailable));
      }
      return Promise.resolve(
        create(IntrospectSessionsResponseSchema, { sessions: request.sessions.map(answerFor) }),
      );
    },
  } as unknown as Client<typeof SessionIntrospectionService>;
  return { client: introspectingTogether(authFlow, sessions), authFlow, calls };
}

const tokens = (count: number) => Array.from({ length: count }, (_, index) => `t${index}`);

describe('introspectingTogether', () => {
  it('sends the introspections of one turn as one call, and answers each its own', async () => {
    const { client, calls } = fakeAuthFlow();
    const answers = await Promise.all(
      tokens(5).map((token) => client.introspectSession({ token, platformKey: 'SHOP' })),
    );
    expect(answers.map((answer) => answer.sessionId)).toEqual(
      tokens(5).map((token) => `for-${token}`),
    );
    expect(calls.batches).toEqual([tokens(5)]);
    expect(calls.single).toEqual([]);
  });

  it('sends a lone introspection, or one with call options, as IntrospectSession', async () => {
    const { client, calls } = fakeAuthFlow();
    await client.introspectSession({ token: 'alone', platformKey: 'SHOP' });
    await Promise.all([
      client.introspectSession({ token: 'with-options', platformKey: 'SHOP' }, { timeoutMs: 50 }),
      client.introspectSession({ token: 'also-alone', platformKey: 'SHOP' }),
    ]);
    expect(calls.single.sort()).toEqual(['alone', 'also-alone', 'with-options']);
    expect(calls.batches).toEqual([]);
  });

  it("gives every introspection of a failed call that call's error", async () => {
    const { client } = fakeAuthFlow({ failBatches: true });
    const outcomes = await Promise.allSettled(
      tokens(3).map((token) => client.introspectSession({ token, platformKey: 'SHOP' })),
    );
    for (const outcome of outcomes) {
      expect(outcome).toMatchObject({ status: 'rejected', reason: { code: Code.Unavailable } });
    }
  });

  it('sends more introspections of one turn than a call carries in several calls', async () => {
    const { client, calls } = fakeAuthFlow();
    await Promise.all(
      tokens(130).map((token) => client.introspectSession({ token, platformKey: 'SHOP' })),
    );
    expect(calls.batches.map((batch) => batch.length)).toEqual([128, 2]);
    expect(calls.batches.flat()).toEqual(tokens(130));
  });

  it("leaves the client's other methods as they are", () => {
    const { client, authFlow } = fakeAuthFlow();
    expect(client.getAccount).toBe(authFlow.getAccount);
  });
});
