import { describe, expect, it } from '@jest/globals';
import { GatewayPlatformError } from './errors.js';
import { basicAuthorization, callGateway } from './gateway-request.js';
import { resolvePlatformSettings } from './options.js';

// How gateway answers are normalised (spec 4.5, 7): the stub fetch stands in for the
// network only; the gateway itself is exercised in services/all-in-one/src/platform-sdk.test.ts.

type Seen = { url: string; init: RequestInit };

function settingsWith(answer: (seen: Seen) => Promise<Response>, timeoutMs = 5000) {
  const seen: Seen[] = [];
  const settings = resolvePlatformSettings({
    gatewayUrl: 'http://gateway.test',
    platformKey: 'SHOP',
    bffKey: { clientId: 'bff-id', clientSecret: 'bff-secret' },
    expectedEnvironment: 'PROD',
    timeoutMs,
    fetch: (input, init = {}) => {
      const call = { url: String(input), init };
      seen.push(call);
      return answer(call);
    },
  });
  return { settings, seen };
}

const json = (status: number, body: unknown) =>
  Promise.resolve(
    new Response(JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json' },
    }),
  );

async function failureOf(promise: Promise<unknown>): Promise<GatewayPlatformError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GatewayPlatformError) return error;
    throw error;
  }
  throw new Error('no failure');
}

const exchange = { path: '/v1/auth/exchange', operation: 'exchange' } as const;

describe('callGateway', () => {
  it('POSTs JSON with Basic credentials and answers the parsed body', async () => {
    const { settings, seen } = settingsWith(() => json(200, { ok: true }));
    const body = await callGateway(settings, {
      ...exchange,
      credentials: settings.bffKey,
      body: { code: 'handoff_x' },
    });
    expect(body).toEqual({ ok: true });
    expect(seen[0]?.url).toBe('http://gateway.test/v1/auth/exchange');
    expect(seen[0]?.init).toMatchObject({
      method: 'POST',
      redirect: 'manual',
      body: '{"code":"handoff_x"}',
      headers: {
        authorization: `Basic ${Buffer.from('bff-id:bff-secret').toString('base64')}`,
        'content-type': 'application/json',
      },
    });
  });

  it('sends a GET or DELETE without a body when told the method', async () => {
    const { settings, seen } = settingsWith(() => json(200, { items: [] }));
    for (const method of ['GET', 'DELETE'] as const) {
      await callGateway(settings, {
        method,
        path: '/v1/account/sessions?except=current',
        operation: 'sessions',
      });
    }
    expect(seen.map((call) => [call.init.method, call.url, call.init.body])).toEqual([
      ['GET', 'http://gateway.test/v1/account/sessions?except=current', undefined],
      ['DELETE', 'http://gateway.test/v1/account/sessions?except=current', undefined],
    ]);
  });

  it('encodes Basic credentials as UTF-8 (RFC 7617)', () => {
    expect(basicAuthorization({ clientId: 'é', clientSecret: 's' })).toBe(
      `Basic ${Buffer.from('é:s', 'utf8').toString('base64')}`,
    );
  });

  it('carries the gateway error code and status of a refusal', async () => {
    const { settings } = settingsWith(() =>
      json(404, { code: 'NOT_FOUND', message: 'Unknown handoff code.' }),
    );
    const error = await failureOf(callGateway(settings, exchange));
    expect(error).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect(error.message).toContain('NOT_FOUND: Unknown handoff code.');
  });

  it('names a refusal without a code GATEWAY_ERROR', async () => {
    const { settings } = settingsWith(() => Promise.resolve(new Response('', { status: 403 })));
    expect(await failureOf(callGateway(settings, exchange))).toMatchObject({
      code: 'GATEWAY_ERROR',
      status: 403,
    });
  });

  it.each([500, 502, 503, 429])('treats %i as GATEWAY_UNAVAILABLE', async (status) => {
    const { settings } = settingsWith(() => json(status, { code: 'IDENTITY_UNAVAILABLE' }));
    expect(await failureOf(callGateway(settings, exchange))).toMatchObject({
      code: 'GATEWAY_UNAVAILABLE',
      status,
    });
  });

  it('treats a network failure as GATEWAY_UNAVAILABLE, keeping the cause', async () => {
    const refused = new TypeError('fetch failed');
    const { settings } = settingsWith(() => Promise.reject(refused));
    const error = await failureOf(callGateway(settings, exchange));
    expect(error).toMatchObject({ code: 'GATEWAY_UNAVAILABLE', status: undefined });
    expect(error.cause).toBe(refused);
  });

  it('gives up after timeoutMs', async () => {
    const { settings } = settingsWith(
      ({ init }) =>
        new Promise<Response>((_resolve, reject) => {
          init.signal?.addEventListener('abort', () => reject(init.signal?.reason));
        }),
      50,
    );
    const error = await failureOf(callGateway(settings, exchange));
    expect(error.code).toBe('GATEWAY_UNAVAILABLE');
    expect(error.message).toContain('within 50 ms');
  });

  it('refuses a 2xx answer without a JSON body', async () => {
    const { settings } = settingsWith(() =>
      Promise.resolve(new Response('<html>', { status: 200 })),
    );
    expect((await failureOf(callGateway(settings, exchange))).code).toBe(
      'INVALID_GATEWAY_RESPONSE',
    );
  });
});
