// LoginBatchService: each login and exchange of a call done as its own call does it, each
// answered on its own.
import { describe, expect, it } from '@jest/globals';
import { createClient, createRouterTransport } from '@connectrpc/connect';
import { LoginBatchService } from '@gateway/contracts';
import { GatewayError, fromConnectError } from '@gateway/errors';
import { callerDeadline, implementationOf, itemError, routesOf } from '@gateway/rpc';
import { createLoginBatches } from './login-batches.js';

type AuthFlow = Parameters<typeof createLoginBatches>[0];

/** Its client as over the wire (Connect's router transport), with `authFlow` behind it. */
function clientOf(authFlow: Partial<AuthFlow>) {
  const reported: string[] = [];
  const implementation = createLoginBatches(authFlow as AuthFlow, (_error, procedure) =>
    reported.push(procedure),
  );
  const client = createClient(
    LoginBatchService,
    createRouterTransport(routesOf([implementationOf(LoginBatchService, implementation)])),
  );
  return { client, reported };
}

const notFound = () => new GatewayError('NOT_FOUND', 'Unknown or inactive platform.');

describe('createLoginBatches', () => {
  it("answers each login its own outcome, in the request's order", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const { client } = clientOf({
      // The first login answers last: the answer still keeps the order of the request.
      async startLogin(request) {
        if (request.platformKey === 'FIRST') await released;
        else release();
        if (request.platformKey === 'NONE') throw notFound();
        return { authorizeUrl: `https://idp.test/authorize?for=${request.platformKey}` };
      },
    });
    const answer = await client.startLogins({
      logins: ['FIRST', 'NONE', 'SHOP'].map((platformKey) => ({ platformKey, returnTo: '/' })),
    });
    const outcomes = answer.logins.map(({ outcome }) =>
      outcome.case === 'answer'
        ? outcome.value.authorizeUrl
        : fromConnectError(itemError(outcome.value)).toBody(),
    );
    expect(outcomes).toEqual([
      'https://idp.test/authorize?for=FIRST',
      { code: 'NOT_FOUND', message: 'Unknown or inactive platform.' },
      'https://idp.test/authorize?for=SHOP',
    ]);
  });

  it("redeems each code within the call's deadline, and answers a failure on its own", async () => {
    const deadlines: (number | undefined)[] = [];
    const { client, reported } = clientOf({
      async exchangeHandoff(request, context) {
        deadlines.push(callerDeadline(context));
        if (request.code === 'handoff_used') {
          throw new GatewayError('NOT_FOUND', 'The code is invalid, expired or used.');
        }
        if (request.code === 'handoff_bug') throw new Error('a bug');
        return { platformKey: request.platformKey, permissions: [] };
      },
    });
    const before = Date.now();
    const answer = await client.exchangeHandoffs(
      {
        exchanges: ['handoff_good', 'handoff_used', 'handoff_bug'].map((code) => ({
          code,
          platformKey: 'SHOP',
          callbackUrl: 'http://localhost:3000/cb',
        })),
      },
      { timeoutMs: 5_000 },
    );
    expect(
      answer.exchanges.map(({ outcome }) =>
        outcome.case === 'answer'
          ? outcome.value.platformKey
          : fromConnectError(itemError(outcome.value)).code,
      ),
    ).toEqual(['SHOP', 'NOT_FOUND', 'INTERNAL_ERROR']);
    expect(reported).toEqual(['authflow.v1.AuthFlowService/ExchangeHandoff']);
    for (const deadline of deadlines) {
      expect(deadline).toBeGreaterThan(before + 3_000);
      expect(deadline).toBeLessThanOrEqual(Date.now() + 5_000);
    }
  });
});
