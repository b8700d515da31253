import { describe, expect, it } from '@jest/globals';
import { GatewayPlatformError } from './errors.js';
import { exchangeHandoff } from './exchange-handoff.js';
import { resolvePlatformSettings } from './options.js';

// Which exchange failures are sent again: the stub fetch stands in for the network only; the
// retry against the real gateway is in services/all-in-one/src/platform-sdk-exchange-retry.test.ts.

function gatewayAnswering(answers: Array<() => Response>) {
  const codes: unknown[] = [];
  const settings = resolvePlatformSettings({
    gatewayUrl: 'http://gateway.test',
    platformKey: 'SHOP',
    bffKey: { clientId: 'bff-id', clientSecret: 'bff-secret' },
    expectedEnvironment: 'PROD',
    fetch: (_input, init = {}) => {
      codes.push(JSON.parse(String(init.body)));
      const next = answers.shift();
      if (next === undefined) throw new Error('no more answers');
      return Promise.resolve(next());
    },
  });
  return { settings, codes };
}

const answer =
  (status: number, headers: Record<string, string> = {}, body: unknown = { code: 'X' }) =>
  () =>
    new Response(JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json', ...headers },
    });
const noAnswer = () => {
  throw new TypeError('fetch failed');
};

async function failureOf(promise: Promise<unknown>): Promise<GatewayPlatformError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GatewayPlatformError) return error;
    throw error;
  }
  throw new Error('it succeeded');
}

describe('exchangeHandoff', () => {
  it('sends the same code again after a 503 with Retry-After 0 and after no answer', async () => {
    const { settings, codes } = gatewayAnswering([
      answer(503, { 'retry-after': '0' }),
      noAnswer,
      answer(200, {}, { ok: true }),
    ]);
    expect(await exchangeHandoff(settings, 'handoff_a')).toEqual({ ok: true });
    expect(codes).toEqual([{ code: 'handoff_a' }, { code: 'handoff_a' }, { code: 'handoff_a' }]);
  });

  it('gives up after three tries, keeping the last 503 and its Retry-After', async () => {
    const { settings, codes } = gatewayAnswering(
      [1, 2, 3].map(() => answer(503, { 'retry-after': '0' })),
    );
    const failure = await failureOf(exchangeHandoff(settings, 'handoff_a'));
    expect(failure).toMatchObject({ code: 'GATEWAY_UNAVAILABLE', status: 503 });
    expect(failure.retryAfterSeconds).toBe(0);
    expect(codes).toHaveLength(3);
  });

  it('does not wait for a Retry-After that ends past the shortest handoff lifetime', async () => {
    const { settings, codes } = gatewayAnswering([answer(503, { 'retry-after': '30' })]);
    const failure = await failureOf(exchangeHandoff(settings, 'handoff_a'));
    expect(failure).toMatchObject({ status: 503, retryAfterSeconds: 30 });
    expect(codes).toHaveLength(1);
  });

  it('does not send again after a 500, a 429 or a refusal', async () => {
    for (const status of [500, 429, 404, 401]) {
      const { settings, codes } = gatewayAnswering([answer(status), answer(200)]);
      expect((await failureOf(exchangeHandoff(settings, 'handoff_a'))).status).toBe(status);
      expect(codes).toHaveLength(1);
    }
  });
});
