// One item of a batch call fails as its own call would: the caller turns it into the same
// GatewayError, and the other items keep their answers.
import { describe, expect, it } from '@jest/globals';
import { create } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import { CallErrorSchema } from '@gateway/contracts';
import { GatewayError, fromConnectError } from '@gateway/errors';
import { itemError, settleEach } from './batch-items.js';

const PROCEDURE = 'authflow.v1.AuthFlowService/StartLogin';

/** Settles `items` with `work` and answers what the caller makes of each outcome. */
async function settled(items: string[], work: (item: string) => Promise<string>) {
  const reported: { error: unknown; procedure: string }[] = [];
  const outcomes = await settleEach(items, work, PROCEDURE, (error, procedure) =>
    reported.push({ error, procedure }),
  );
  const seen = outcomes.map(({ outcome }) =>
    outcome.case === 'answer'
      ? { answer: outcome.value }
      : { error: fromConnectError(itemError(create(CallErrorSchema, outcome.value))).toBody() },
  );
  return { seen, reported };
}

describe('settleEach and itemError', () => {
  it("answers each item its own outcome, in the items' order", async () => {
    const { seen, reported } = await settled(['a', 'missing', 'b'], async (item) => {
      if (item === 'missing') {
        throw new GatewayError('NOT_FOUND', 'Unknown or inactive platform.', {
          details: { platformKey: item },
        });
      }
      return `started ${item}`;
    });
    expect(seen).toEqual([
      { answer: 'started a' },
      {
        error: {
          code: 'NOT_FOUND',
          message: 'Unknown or inactive platform.',
          details: { platformKey: 'missing' },
        },
      },
      { answer: 'started b' },
    ]);
    expect(reported).toEqual([]);
  });

  it('hides an unexpected failure and reports it under the method the item stands for', async () => {
    const bug = new Error('connection string postgres://user:hunter2@db/x broke');
    const { seen, reported } = await settled(['a'], () => Promise.reject(bug));
    expect(seen).toEqual([{ error: { code: 'INTERNAL_ERROR', message: 'Internal error.' } }]);
    expect(reported).toEqual([{ error: bug, procedure: PROCEDURE }]);
  });

  it('answers SERVICE_UNAVAILABLE for an item whose Redis or PostgreSQL failed', async () => {
    const { seen } = await settled(['a'], () => Promise.reject(new Error('Connection is closed.')));
    expect(seen).toEqual([
      { error: { code: 'SERVICE_UNAVAILABLE', message: 'A gateway dependency is unavailable.' } },
    ]);
  });

  it('keeps the Connect code of the error, and makes an unknown code Internal', () => {
    const callError = (code: number, message: string) => create(CallErrorSchema, { code, message });
    expect(itemError(callError(Code.NotFound, 'gone'))).toMatchObject({
      code: Code.NotFound,
      rawMessage: 'gone',
    });
    expect(itemError(callError(99, 'odd')).code).toBe(Code.Internal);
    expect(itemError(callError(0, 'none')).code).toBe(Code.Internal);
  });
});
