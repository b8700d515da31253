// The edge's split-mode auth-flow client: the introspections, starts and exchanges of one turn
// go as one batch call each, every caller getting its own answer or error.
import { describe, expect, it } from '@jest/globals';
import { createClient, createRouterTransport, type ServiceImpl } from '@connectrpc/connect';
import {
  AuthFlowService,
  LoginBatchService,
  SessionIntrospectionService,
} from '@gateway/contracts';
import { fromConnectError } from '@gateway/errors';
import { authFlowCallsTogether } from './auth-flow-batches.js';

const CALLBACK = 'http://localhost:3000/cb';

/** Auth-flow over Connect's router transport, counting the calls of each method. */
function fakeAuthFlow() {
  const calls: Record<string, number[]> = {};
  const count = (method: string, items = 1) => (calls[method] ??= []).push(items);
  const gone = {
    code: 5,
    message: 'The code is invalid, expired or used.',
    detail: { code: 'NOT_FOUND' },
  };
  const authFlow: Partial<ServiceImpl<typeof AuthFlowService>> = {
    startLogin: (request) => {
      count('startLogin');
      return { authorizeUrl: `https://idp.test/authorize?for=${request.platformKey}` };
    },
    getAccount: () => ({}),
  };
  const logins: ServiceImpl<typeof LoginBatchService> = {
    startLogins: (request) => {
      count('startLogins', request.logins.length);
      return {
        logins: request.logins.map((login) => ({
          outcome: {
            case: 'answer',
            value: { authorizeUrl: `https://idp.test/authorize?for=${login.platformKey}` },
          },
        })),
      };
    },
    exchangeHandoffs: (request) => {
      count('exchangeHandoffs', request.exchanges.length);
      return {
        exchanges: request.exchanges.map((exchange) => ({
          outcome:
            exchange.code === 'handoff_used'
              ? { case: 'error', value: gone }
              : { case: 'answer', value: { platformKey: exchange.platformKey } },
        })),
      };
    },
  };
  const sessions: ServiceImpl<typeof SessionIntrospectionService> = {
    introspectSessions: (request) => {
      count('introspectSessions', request.sessions.length);
      return {
        sessions: request.sessions.map((session) => ({ active: session.token === 'live' })),
      };
    },
  };
  const transport = createRouterTransport((router) => {
    router.service(AuthFlowService, authFlow);
    router.service(LoginBatchService, logins);
    router.service(SessionIntrospectionService, sessions);
  });
  const direct = createClient(AuthFlowService, transport);
  const client = authFlowCallsTogether(
    direct,
    createClient(SessionIntrospectionService, transport),
    createClient(LoginBatchService, transport),
  );
  return { client, direct, calls };
}

describe('authFlowCallsTogether', () => {
  it('starts the logins of one turn in one StartLogins call', async () => {
    const { client, calls } = fakeAuthFlow();
    const answers = await Promise.all(
      ['A', 'B', 'C'].map((platformKey) => client.startLogin({ platformKey, returnTo: '/' })),
    );
    expect(answers.map((answer) => answer.authorizeUrl)).toEqual(
      ['A', 'B', 'C'].map((key) => `https://idp.test/authorize?for=${key}`),
    );
    expect(calls).toEqual({ startLogins: [3] });
  });

  it('redeems the codes of one turn in one ExchangeHandoffs call, failing only the used one', async () => {
    const { client, calls } = fakeAuthFlow();
    const outcomes = await Promise.allSettled(
      ['handoff_a', 'handoff_used', 'handoff_b'].map((code) =>
        client.exchangeHandoff({ code, platformKey: 'SHOP', callbackUrl: CALLBACK }),
      ),
    );
    expect(
      outcomes.map((outcome) =>
        outcome.status === 'fulfilled'
          ? outcome.value.platformKey
          : fromConnectError(outcome.reason).toBody(),
      ),
    ).toEqual([
      'SHOP',
      { code: 'NOT_FOUND', message: 'The code is invalid, expired or used.' },
      'SHOP',
    ]);
    expect(calls).toEqual({ exchangeHandoffs: [3] });
  });

  it('introspects the sessions of one turn in one IntrospectSessions call', async () => {
    const { client, calls } = fakeAuthFlow();
    const answers = await Promise.all(
      ['live', 'dead'].map((token) => client.introspectSession({ token, platformKey: 'SHOP' })),
    );
    expect(answers.map((answer) => answer.active)).toEqual([true, false]);
    expect(calls).toEqual({ introspectSessions: [2] });
  });

  it("leaves a lone start, and the client's other methods, as they are", async () => {
    const { client, direct, calls } = fakeAuthFlow();
    await client.startLogin({ platformKey: 'A', returnTo: '/' });
    expect(calls).toEqual({ startLogin: [1] });
    expect(client.getAccount).toBe(direct.getAccount);
  });
});
