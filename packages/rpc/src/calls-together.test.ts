// A method whose calls of one turn go to the service as one batch call: each caller gets its
// own answer or error, whichever way the batch went.
import { describe, expect, it } from '@jest/globals';
import { Code, ConnectError } from '@connectrpc/connect';
import { callsTogether, MAX_ITEMS_PER_CALL } from './calls-together.js';

type Request = { token: string };

/** A method answering `for-<token>`; its batch fails `fail-<...>` items, or as a whole. */
function fakeMethod(options: { batch?: 'fails' | 'unknown' } = {}) {
  const calls = { single: [] as string[], batches: [] as string[][] };
  const single = (request: Request) => {
    calls.single.push(request.token);
    return Promise.resolve(`for-${request.token}`);
  };
  const together = (requests: Request[]) => {
    calls.batches.push(requests.map((request) => request.token));
    if (options.batch === 'fails') {
      return Promise.reject(new ConnectError('the service is down', Code.Unavailable));
    }
    if (options.batch === 'unknown') {
      return Promise.reject(new ConnectError('no such method', Code.Unimplemented));
    }
    return Promise.resolve(
      requests.map(({ token }) =>
        token.startsWith('fail-') ? new ConnectError(`no ${token}`, Code.NotFound) : `for-${token}`,
      ),
    );
  };
  return { call: callsTogether(single, together), calls };
}

const tokens = (count: number) => Array.from({ length: count }, (_, index) => `t${index}`);

describe('callsTogether', () => {
  it('sends the calls of one turn as one batch call, and answers each its own', async () => {
    const { call, calls } = fakeMethod();
    const answers = await Promise.all(tokens(5).map((token) => call({ token })));
    expect(answers).toEqual(tokens(5).map((token) => `for-${token}`));
    expect(calls.batches).toEqual([tokens(5)]);
    expect(calls.single).toEqual([]);
  });

  it('fails only the calls whose own outcome is an error', async () => {
    const { call } = fakeMethod();
    const outcomes = await Promise.allSettled(['a', 'fail-b', 'c'].map((token) => call({ token })));
    expect(outcomes).toMatchObject([
      { status: 'fulfilled', value: 'for-a' },
      { status: 'rejected', reason: { code: Code.NotFound, rawMessage: 'no fail-b' } },
      { status: 'fulfilled', value: 'for-c' },
    ]);
  });

  it('sends a lone call, or one with call options, on its own', async () => {
    const { call, calls } = fakeMethod();
    await call({ token: 'alone' });
    await Promise.all([
      call({ token: 'with-options' }, { timeoutMs: 50 }),
      call({ token: 'also-alone' }),
    ]);
    expect(calls.single.sort()).toEqual(['alone', 'also-alone', 'with-options']);
    expect(calls.batches).toEqual([]);
  });

  it("gives every call of a failed batch call that call's error", async () => {
    const { call } = fakeMethod({ batch: 'fails' });
    const outcomes = await Promise.allSettled(tokens(3).map((token) => call({ token })));
    for (const outcome of outcomes) {
      expect(outcome).toMatchObject({ status: 'rejected', reason: { code: Code.Unavailable } });
    }
  });

  it('sends each call on its own to a service that does not know the batch method', async () => {
    const { call, calls } = fakeMethod({ batch: 'unknown' });
    const answers = await Promise.all(tokens(3).map((token) => call({ token })));
    expect(answers).toEqual(tokens(3).map((token) => `for-${token}`));
    expect(calls.single.sort()).toEqual(tokens(3));
  });

  it('sends more calls of one turn than a batch call carries in several batch calls', async () => {
    const { call, calls } = fakeMethod();
    const count = MAX_ITEMS_PER_CALL + 2;
    await Promise.all(tokens(count).map((token) => call({ token })));
    expect(calls.batches.map((batch) => batch.length)).toEqual([MAX_ITEMS_PER_CALL, 2]);
    expect(calls.batches.flat()).toEqual(tokens(count));
  });
});
