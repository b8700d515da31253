import { generateEncryptionKeySpec } from '@gateway/crypto';
import { waitFor, type TestOpenIdProvider } from '@gateway/testkit';

// The steps of a whole sign-in as a browser and a platform backend take them against the
// split deployment's edges, each step against whichever edge the caller names.

export type PlatformKey = { clientId: string; clientSecret: string };

export const basicOf = (key: PlatformKey) =>
  `Basic ${Buffer.from(`${key.clientId}:${key.clientSecret}`).toString('base64')}`;

/** POST /v1/platforms with one web redirect pair: answers the platform's first key. */
export async function createPlatform(
  edge: string,
  provider: TestOpenIdProvider,
  platformKey: string,
): Promise<PlatformKey> {
  const created = await fetch(`${edge}/v1/platforms`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${await provider.machineToken({ scope: 'platforms:admin' })}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      platformKey,
      displayName: platformKey,
      redirectPairs: [
        {
          label: 'web',
          returnUrl: 'http://localhost:3000/',
          callbackUrl: 'http://localhost:3000/cb',
          isDefault: true,
        },
      ],
    }),
  });
  if (created.status !== 201) {
    throw new Error(`creating ${platformKey}: ${created.status} ${await created.text()}`);
  }
  const [key] = ((await created.json()) as { credentials: PlatformKey[] }).credentials;
  if (key === undefined) throw new Error('no credential issued');
  return key;
}

/** GET /v1/auth/start on `edge`, then the provider's login: answers the callback query. */
export async function startAndSignIn(
  edge: string,
  provider: TestOpenIdProvider,
  platformKey: string,
  accountId: string,
): Promise<string> {
  const start = await fetch(`${edge}/v1/auth/start?platformKey=${platformKey}&returnTo=%2F`, {
    redirect: 'manual',
  });
  if (start.status !== 302) throw new Error(`start: ${start.status} ${await start.text()}`);
  const callback = await provider.browser().signIn(start.headers.get('location') ?? '', accountId);
  return callback.search;
}

/** GET /v1/auth/callback on `edge`: answers the handoff code in the redirect. */
export async function callback(edge: string, search: string): Promise<string> {
  const landed = await fetch(`${edge}/v1/auth/callback${search}`, { redirect: 'manual' });
  const code = new URL(landed.headers.get('location') ?? 'http://x/').searchParams.get('code');
  if (landed.status !== 302 || code === null) {
    throw new Error(`callback: ${landed.status} ${await landed.text()}`);
  }
  return code;
}

export async function exchange(edge: string, key: PlatformKey, code: string): Promise<Response> {
  return fetch(`${edge}/v1/auth/exchange`, {
    method: 'POST',
    headers: { authorization: basicOf(key), 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
}

export async function introspect(edge: string, key: PlatformKey, token: string): Promise<Response> {
  return fetch(`${edge}/v1/auth/introspect`, {
    method: 'POST',
    headers: { authorization: basicOf(key), 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
}

/** Exchange that must succeed: answers the gateway token and the user's sub. */
export async function exchangeOk(
  edge: string,
  key: PlatformKey,
  code: string,
): Promise<{ token: string; sub: string }> {
  const response = await exchange(edge, key, code);
  if (response.status !== 200) {
    throw new Error(`exchange: ${response.status} ${await response.text()}`);
  }
  const body = (await response.json()) as {
    session: { gatewayToken: string };
    user: { sub: string };
  };
  return { token: body.session.gatewayToken, sub: body.user.sub };
}

/**
 * The environment of a local split deployment for tests: the real OpenID Provider as the
 * deployment environment, one PostgreSQL database and one Redis prefix. `overrides` win.
 */
export function splitTestEnv(
  provider: TestOpenIdProvider,
  stores: { databaseUrl: string; redisUrl: string; redisKeyPrefix: string },
  overrides: Record<string, string> = {},
): NodeJS.ProcessEnv {
  const gatewayClient = provider.clients.find((client) => client.clientId === 'test-gateway');
  return {
    PATH: process.env.PATH,
    IDENTITY_ISSUER: provider.issuer,
    IDENTITY_OIDC_CLIENT_ID: 'test-gateway',
    IDENTITY_OIDC_CLIENT_SECRET: gatewayClient?.clientSecret ?? '',
    IDENTITY_ACCESS_TOKEN_AUDIENCE: provider.audience,
    IDENTITY_DEPLOYMENT_TIER: 'development',
    // Every edge is one public gateway: the callback registered at the provider.
    AUTH_CALLBACK_URL: 'http://localhost:8080/v1/auth/callback',
    DATABASE_URL: stores.databaseUrl,
    REDIS_URL: stores.redisUrl,
    REDIS_KEY_PREFIX: stores.redisKeyPrefix,
    GATEWAY_ENCRYPTION_KEYS: generateEncryptionKeySpec('k1'),
    LOG_LEVEL: 'warn',
    ...overrides,
  };
}

/** Waits until each edge port answers ready; the error carries the processes' output. */
export async function waitForReadyEdges(
  ports: readonly number[],
  output: readonly string[],
): Promise<void> {
  for (const port of ports) {
    await waitFor(
      async () =>
        (await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => undefined))?.status ===
        200,
      { timeoutMs: 90_000, intervalMs: 300, what: `the edge on ${port} to answer ready` },
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${output.join('\n')}`);
    });
  }
}
