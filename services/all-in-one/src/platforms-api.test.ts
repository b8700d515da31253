import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RegistryService } from '@gateway/contracts';
import { fromConnectError, GatewayError } from '@gateway/errors';
import { createRegistryImplementations, registryDepsFromConfig } from '@gateway/registry';
import { connectService, createServiceInterceptors } from '@gateway/rpc';
import { createLogger } from '@gateway/telemetry';
import { waitFor } from '@gateway/testkit';
import pg from 'pg';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';

// Spec 2.1-2.3, 3.4, 4.10 through the edge over HTTP against PostgreSQL.
let t: GatewayUnderTest;

// Queries sent on a pg connection while another query still waited on it (pg 8 warns that
// pg 9 will refuse them). `_queryQueue` is pg's own queue; it is what its warning checks.
const sentWhileBusy: string[] = [];
const clientQuery = pg.Client.prototype.query;
function noteBusyQuery(this: pg.Client, ...args: unknown[]): unknown {
  const queue = (this as unknown as { _queryQueue?: unknown[] })._queryQueue ?? [];
  if (queue.length > 0) sentWhileBusy.push(String(args[0]).slice(0, 80));
  return (clientQuery as (...a: unknown[]) => unknown).apply(this, args);
}

beforeAll(async () => {
  pg.Client.prototype.query = noteBusyQuery as typeof clientQuery;
  t = await startGatewayUnderTest();
});
afterAll(async () => {
  pg.Client.prototype.query = clientQuery;
  await t.close();
});

type Json = Record<string, unknown>;
type Platform = Json & {
  redirectPairs: (Json & { id: string })[];
  credentials: (Json & { id: string })[];
};
type Issued = {
  id: string;
  kind: string;
  redirectPairId: string | null;
  clientId: string;
  clientSecret: string;
};

const shop = (overrides: Json = {}) => ({
  platformKey: 'SHOP',
  displayName: 'Shop',
  redirectPairs: [
    {
      label: 'web',
      returnUrl: 'http://localhost:3000/',
      callbackUrl: 'http://localhost:3000/auth/callback',
      isDefault: true,
    },
    {
      label: 'app',
      returnUrl: 'http://localhost:3000/app',
      callbackUrl: 'http://localhost:3000/auth/callback',
      isDefault: false,
    },
    {
      label: 'admin',
      returnUrl: 'http://localhost:4000/admin',
      callbackUrl: 'http://localhost:4000/cb',
      isDefault: false,
    },
  ],
  metadata: { owner: 'retail' },
  ...overrides,
});

// The credential check the exchange and introspect endpoints use (login-flow issue), called
// here over the registry's own Connect contract.
function registryClient() {
  const logger = createLogger({ service: 'test', level: 'silent' });
  const implementations = createRegistryImplementations({
    deps: registryDepsFromConfig(t.config, t.db),
    probeTimeoutMs: 1000,
    onBackgroundError: () => undefined,
  });
  return connectService(
    { kind: 'in-process', implementations, serverInterceptors: createServiceInterceptors(logger) },
    { timeoutMs: 3000 },
  ).client(RegistryService);
}

/** The registry's verdict: the credential, or UNAUTHORIZED (unknown id, or a wrong secret). */
async function verify(clientId: string, clientSecret: string) {
  try {
    const answer = await registryClient().verifyPlatformCredential({ clientId, clientSecret });
    return answer.secretMatches ? answer : new GatewayError('UNAUTHORIZED', 'Wrong secret.');
  } catch (error) {
    return fromConnectError(error);
  }
}

/** An introspection through the edge with a key: its status (200 for any token once verified). */
async function introspectWith(clientId: string, clientSecret: string): Promise<number> {
  const authorization = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
  const answer = await t.call('POST', '/v1/auth/introspect', {
    token: null,
    headers: { authorization },
    body: { token: 'gst_unknown' },
  });
  return answer.status;
}

async function auditKinds(targetKey: string): Promise<string[]> {
  const { body } = await t.call('GET', `/v1/audit-records?targetKey=${targetKey}&pageSize=100`);
  return (body.items ?? []).map((item) => String(item.kind));
}

let created: { platform: Platform; credentials: Issued[] };

describe('creating a platform', () => {
  it('creates it with its pairs and one BFF key per callback, secrets returned once', async () => {
    const { status, body } = await t.call('POST', '/v1/platforms', { body: shop() });
    expect(status).toBe(201);
    created = body as unknown as typeof created;
    expect(created.platform).toMatchObject({
      platformKey: 'SHOP',
      displayName: 'Shop',
      active: true,
      status: 'active',
      requirementVersion: 0,
      defaultOnboardingMode: 'none',
      centralOnboardingEnabled: false,
      credentialsConfigured: true,
      identityEnvironment: { key: 'PROD', tier: 'development', active: true },
      metadata: { owner: 'retail' },
    });
    expect(created.platform.redirectPairs.map((pair) => pair.returnUrl)).toEqual([
      'http://localhost:3000',
      'http://localhost:3000/app',
      'http://localhost:4000/admin',
    ]);
    // Two callbacks, so two keys; the pairs sharing a callback share one.
    expect(created.credentials).toHaveLength(2);
    for (const credential of created.credentials) {
      expect(credential.kind).toBe('bff');
      expect(credential.clientSecret.length).toBeGreaterThanOrEqual(43);
    }
    expect(JSON.stringify(created.platform)).not.toContain(created.credentials[0]?.clientSecret);
    expect(await auditKinds('SHOP')).toEqual(
      expect.arrayContaining([
        'platform.created',
        'platform.credential_created',
        'platform.credential_created',
      ]),
    );
  });

  it('never shows secrets again, and stores only hashes', async () => {
    const { body } = await t.call('GET', '/v1/platforms/SHOP');
    for (const credential of created.credentials) {
      expect(JSON.stringify(body)).not.toContain(credential.clientSecret);
    }
    expect(body).not.toHaveProperty('callbackUrl');
    expect(body).not.toHaveProperty('allowedReturnUrls');
    const rows = await t.db.knex('registry.platform_credentials').select('secret_hash');
    for (const row of rows)
      expect(created.credentials.map((c) => c.clientSecret)).not.toContain(row.secret_hash);
  });

  it.each([
    [
      'callbackUrl (removed field)',
      { platformKey: 'OLD1', callbackUrl: 'http://localhost:3000/cb' },
    ],
    [
      'allowedReturnUrls (removed field)',
      { platformKey: 'OLD2', allowedReturnUrls: ['http://localhost:3000'] },
    ],
    ['a lower-case key', { platformKey: 'shop2' }],
    ['no redirect pair', { platformKey: 'NOPAIR', redirectPairs: [] }],
    [
      'two defaults',
      {
        platformKey: 'TWODEF',
        redirectPairs: [
          {
            label: 'a',
            returnUrl: 'http://localhost:1/a',
            callbackUrl: 'http://localhost:1/cb',
            isDefault: true,
          },
          {
            label: 'b',
            returnUrl: 'http://localhost:1/b',
            callbackUrl: 'http://localhost:1/cb',
            isDefault: true,
          },
        ],
      },
    ],
    [
      'a return URL with a query',
      {
        platformKey: 'QUERY',
        redirectPairs: [
          {
            label: 'a',
            returnUrl: 'http://localhost:1/a?x=1',
            callbackUrl: 'http://localhost:1/cb',
            isDefault: true,
          },
        ],
      },
    ],
    [
      'a callback with credentials',
      {
        platformKey: 'CREDS',
        redirectPairs: [
          {
            label: 'a',
            returnUrl: 'http://localhost:1/a',
            callbackUrl: 'http://u:p@localhost:1/cb',
            isDefault: true,
          },
        ],
      },
    ],
    [
      'central mode while central onboarding is off',
      { platformKey: 'CENTRAL', defaultOnboardingMode: 'central' },
    ],
    [
      'an onboarding path that is not root-relative',
      { platformKey: 'PATHX', platformOnboardingPath: 'https://evil.example/x' },
    ],
  ])('refuses %s with 400 VALIDATION_ERROR and writes nothing', async (_name, change) => {
    const before = await t.db.knex('registry.platforms').count({ n: '*' });
    const { status, body } = await t.call('POST', '/v1/platforms', { body: shop(change) });
    expect(status).toBe(400);
    expect(body.code).toBe('VALIDATION_ERROR');
    const after = await t.db.knex('registry.platforms').count({ n: '*' });
    expect(after).toEqual(before);
  });

  it('refuses a duplicate key with 409', async () => {
    expect((await t.call('POST', '/v1/platforms', { body: shop() })).status).toBe(409);
  });

  it('requires public HTTPS URLs in a production-tier environment', async () => {
    await t.call('POST', '/v1/identity-environments', {
      body: {
        environmentKey: 'LIVE',
        displayName: 'Live',
        tier: 'production',
        issuer: 'https://id.live.example.com',
        oidcClientId: 'gateway',
      },
    });
    const local = await t.call('POST', '/v1/platforms', {
      body: shop({ platformKey: 'LIVESHOP', identityEnvironmentKey: 'LIVE' }),
    });
    expect(local.status).toBe(400);
    const https = await t.call('POST', '/v1/platforms', {
      body: shop({
        platformKey: 'LIVESHOP',
        identityEnvironmentKey: 'LIVE',
        redirectPairs: [
          {
            label: 'web',
            returnUrl: 'https://shop.example.com',
            callbackUrl: 'https://shop.example.com/cb',
            isDefault: true,
          },
        ],
      }),
    });
    expect(https.status).toBe(201);
  });

  it('accepts central mode when central onboarding is enabled', async () => {
    const { status, body } = await t.call('POST', '/v1/platforms', {
      body: shop({
        platformKey: 'CENTRALOK',
        defaultOnboardingMode: 'central',
        centralOnboardingEnabled: true,
        platformOnboardingPath: '/welcome',
      }),
    });
    expect(status).toBe(201);
    expect((body.platform as Json).platformOnboardingPath).toBe('/welcome');
  });
});

describe('listing platforms', () => {
  it('lists in an { items } envelope, filters by environment, and shows archived ones only when asked', async () => {
    const all = await t.call('GET', '/v1/platforms');
    expect(all.body.items?.map((p) => p.platformKey)).toEqual(['CENTRALOK', 'LIVESHOP', 'SHOP']);
    const live = await t.call('GET', '/v1/platforms?identityEnvironmentKey=LIVE');
    expect(live.body.items?.map((p) => p.platformKey)).toEqual(['LIVESHOP']);
    const archived = await t.call('GET', '/v1/platforms?archived=true');
    expect(archived.body.items).toEqual([]);
  });
});

describe('the credential check (exchange and introspect rely on it)', () => {
  it('accepts a BFF key and tells which platform, pair and callback it serves', async () => {
    const key = created.credentials.find(
      (c) => c.redirectPairId === created.platform.redirectPairs[2]?.id,
    );
    if (key === undefined) throw new Error('no key for the admin pair');
    const verified = await verify(key.clientId, key.clientSecret);
    expect(verified).toMatchObject({
      kind: 'bff',
      platformKey: 'SHOP',
      platformActive: true,
      callbackUrl: 'http://localhost:4000/cb',
    });
  });

  it('refuses a wrong secret and an unknown client id with UNAUTHORIZED', async () => {
    const key = created.credentials[0] as Issued;
    expect(await verify(key.clientId, `${key.clientSecret}x`)).toMatchObject({
      code: 'UNAUTHORIZED',
    });
    expect(await verify('gwc_unknown', key.clientSecret)).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('records lastUsedAt', async () => {
    const key = created.credentials[0] as Issued;
    await verify(key.clientId, key.clientSecret);
    // Written after the answer, off the request's path.
    await waitFor(
      async () => {
        const { body } = await t.call('GET', '/v1/platforms/SHOP');
        const lastUsedAt = (body.credentials as Json[]).find((c) => c.id === key.id)?.lastUsedAt;
        return typeof lastUsedAt === 'string';
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'lastUsedAt of the key' },
    );
  });
});

describe('credentials', () => {
  it('issue one backend key at most, and one BFF key per callback', async () => {
    const backend = await t.call('POST', '/v1/platforms/SHOP/credentials', {
      body: { kind: 'backend' },
    });
    expect(backend.status).toBe(201);
    expect((backend.body.credentials as Issued[])[0]).toMatchObject({
      kind: 'backend',
      redirectPairId: null,
    });
    expect(
      (await t.call('POST', '/v1/platforms/SHOP/credentials', { body: { kind: 'backend' } }))
        .status,
    ).toBe(409);
    const pairWithSharedCallback = created.platform.redirectPairs[1]?.id;
    const second = await t.call('POST', '/v1/platforms/SHOP/credentials', {
      body: { kind: 'bff', redirectPairId: pairWithSharedCallback },
    });
    expect(second.status).toBe(409);
  });

  it('rotate: the previous secret stays valid for the grace period, until revoked', async () => {
    const key = created.credentials[0] as Issued;
    const rotated = await t.call('POST', `/v1/platforms/SHOP/credentials/${key.id}/rotate`, {
      body: {},
    });
    expect(rotated.status).toBe(200);
    const fresh = (rotated.body.credentials as Issued[])[0] as Issued;
    expect(fresh.clientId).toBe(key.clientId);
    expect(fresh.clientSecret).not.toBe(key.clientSecret);
    const view = (rotated.body.platform as Platform).credentials.find((c) => c.id === key.id);
    const graceEnds = Date.parse(String(view?.previousSecretExpiresAt));
    expect(graceEnds - Date.now()).toBeGreaterThan(59 * 60 * 1000);
    expect(graceEnds - Date.now()).toBeLessThanOrEqual(60 * 60 * 1000);
    expect(await verify(key.clientId, key.clientSecret)).toMatchObject({ platformKey: 'SHOP' });
    expect(await verify(fresh.clientId, fresh.clientSecret)).toMatchObject({ platformKey: 'SHOP' });
    // The edge checks both secrets of the client id itself during the grace period.
    expect(await introspectWith(key.clientId, key.clientSecret)).toBe(200);
    expect(await introspectWith(fresh.clientId, fresh.clientSecret)).toBe(200);

    const revoked = await t.call(
      'DELETE',
      `/v1/platforms/SHOP/credentials/${key.id}/previous-secret`,
    );
    expect(revoked.status).toBe(200);
    expect(await verify(key.clientId, key.clientSecret)).toMatchObject({ code: 'UNAUTHORIZED' });
    expect(await verify(fresh.clientId, fresh.clientSecret)).toMatchObject({ platformKey: 'SHOP' });
    // The revocation is announced: the edge forgets the old hash at once.
    expect(await introspectWith(key.clientId, key.clientSecret)).toBe(401);
    expect(await introspectWith(fresh.clientId, fresh.clientSecret)).toBe(200);
    key.clientSecret = fresh.clientSecret;
  });

  it('rotate with revokePreviousImmediately or rotateClientId ends the old secret at once', async () => {
    const key = created.credentials[0] as Issued;
    const immediate = await t.call('POST', `/v1/platforms/SHOP/credentials/${key.id}/rotate`, {
      body: { revokePreviousImmediately: true },
    });
    const afterImmediate = (immediate.body.credentials as Issued[])[0] as Issued;
    expect(await verify(key.clientId, key.clientSecret)).toMatchObject({ code: 'UNAUTHORIZED' });

    const newId = await t.call('POST', `/v1/platforms/SHOP/credentials/${key.id}/rotate`, {
      body: { rotateClientId: true },
    });
    const afterNewId = (newId.body.credentials as Issued[])[0] as Issued;
    expect(afterNewId.clientId).not.toBe(key.clientId);
    expect(await verify(afterImmediate.clientId, afterImmediate.clientSecret)).toMatchObject({
      code: 'UNAUTHORIZED',
    });
    expect(await verify(afterNewId.clientId, afterNewId.clientSecret)).toMatchObject({
      platformKey: 'SHOP',
    });
    Object.assign(key, afterNewId);
    expect(await auditKinds('SHOP')).toEqual(
      expect.arrayContaining([
        'platform.credential_rotated',
        'platform.credential_previous_secret_revoked',
      ]),
    );
  });

  it('refuses to delete the last BFF key of an active platform, and deletes others', async () => {
    const [first, second] = created.credentials as [Issued, Issued];
    expect((await t.call('DELETE', `/v1/platforms/SHOP/credentials/${second.id}`)).status).toBe(
      200,
    );
    expect(await verify(second.clientId, second.clientSecret)).toMatchObject({
      code: 'UNAUTHORIZED',
    });
    const platform = await t.call('GET', '/v1/platforms/SHOP');
    expect(platform.body.credentialsConfigured).toBe(false);
    const last = await t.call('DELETE', `/v1/platforms/SHOP/credentials/${first.id}`);
    expect(last.status).toBe(409);
    expect(await auditKinds('SHOP')).toContain('platform.credential_revoked');
    // Give the admin pair's callback a key again.
    const reissued = await t.call('POST', '/v1/platforms/SHOP/credentials', {
      body: { kind: 'bff', redirectPairId: created.platform.redirectPairs[2]?.id },
    });
    expect(reissued.status).toBe(201);
    created.credentials[1] = (reissued.body.credentials as Issued[])[0] as Issued;
  });
});

describe('updating a platform', () => {
  it('updates pairs in place by id or return URL, deletes omitted pairs with their keys, and keys new callbacks', async () => {
    const [web, app, admin] = created.platform.redirectPairs as [
      Platform['redirectPairs'][0],
      Platform['redirectPairs'][0],
      Platform['redirectPairs'][0],
    ];
    const adminKey = created.credentials[1] as Issued;
    const { status, body } = await t.call('PATCH', '/v1/platforms/SHOP', {
      body: {
        displayName: 'Shop 2',
        redirectPairs: [
          {
            id: web.id,
            label: 'web renamed',
            returnUrl: 'http://localhost:3000/',
            callbackUrl: 'http://localhost:3000/auth/callback',
            isDefault: true,
          },
          {
            label: 'app',
            returnUrl: 'http://localhost:3000/app',
            callbackUrl: 'http://localhost:3000/auth/callback',
            isDefault: false,
          },
          {
            label: 'mobile',
            returnUrl: 'http://localhost:5000',
            callbackUrl: 'http://localhost:5000/cb',
            isDefault: false,
          },
        ],
      },
    });
    expect(status).toBe(200);
    const platform = body.platform as Platform;
    expect(platform.displayName).toBe('Shop 2');
    expect(platform.redirectPairs.map((pair) => pair.id).slice(0, 2)).toEqual([web.id, app.id]);
    expect(platform.redirectPairs[0]?.label).toBe('web renamed');
    expect(platform.redirectPairs.map((pair) => pair.id)).not.toContain(admin.id);
    const issued = body.credentials as Issued[];
    expect(issued).toHaveLength(1);
    expect(issued[0]?.redirectPairId).toBe(platform.redirectPairs[2]?.id);
    expect(platform.credentialsConfigured).toBe(true);
    expect(await verify(adminKey.clientId, adminKey.clientSecret)).toMatchObject({
      code: 'UNAUTHORIZED',
    });
    const audit = await t.call('GET', '/v1/audit-records?kind=platform.updated&targetKey=SHOP');
    expect(audit.body.items?.[0]?.details).toMatchObject({
      revokedCredentials: [
        expect.objectContaining({ credentialId: adminKey.id, redirectPairId: admin.id }),
      ],
    });
  });

  it('audits a change of identity environment', async () => {
    await t.call('POST', '/v1/identity-environments', {
      body: {
        environmentKey: 'DEV',
        displayName: 'Dev',
        tier: 'development',
        issuer: 'http://localhost:7777/dev',
        oidcClientId: 'gw',
      },
    });
    const { status, body } = await t.call('PATCH', '/v1/platforms/SHOP', {
      body: { identityEnvironmentKey: 'DEV' },
    });
    expect(status).toBe(200);
    expect((body.platform as Json).identityEnvironment).toMatchObject({ key: 'DEV' });
    const audit = await t.call(
      'GET',
      '/v1/audit-records?kind=platform.environment_changed&targetKey=SHOP',
    );
    expect(audit.body.items?.[0]?.details).toEqual({ from: 'PROD', to: 'DEV' });
  });

  it('refuses a patch with a removed field or unknown property, changing nothing', async () => {
    const before = await t.call('GET', '/v1/platforms/SHOP');
    expect(
      (await t.call('PATCH', '/v1/platforms/SHOP', { body: { callbackUrl: 'http://localhost/x' } }))
        .status,
    ).toBe(400);
    expect(
      (await t.call('PATCH', '/v1/platforms/SHOP', { body: { displayName: 'x', bogus: 1 } }))
        .status,
    ).toBe(400);
    expect((await t.call('GET', '/v1/platforms/SHOP')).body).toEqual(before.body);
  });
});

describe('platform states (spec 3.4)', () => {
  it('archives only an inactive platform, revoking its keys and reserving its key', async () => {
    expect((await t.call('POST', '/v1/platforms/SHOP/archive')).status).toBe(409);
    const inactive = await t.call('DELETE', '/v1/platforms/SHOP');
    expect(inactive.body).toMatchObject({ active: false, status: 'inactive' });
    const archived = await t.call('POST', '/v1/platforms/SHOP/archive');
    expect(archived.body).toMatchObject({ status: 'archived', credentials: [] });
    expect((await t.call('POST', '/v1/platforms/SHOP/archive')).status).toBe(200);
    for (const key of created.credentials) {
      expect(await verify(key.clientId, key.clientSecret)).toMatchObject({ code: 'UNAUTHORIZED' });
    }
    expect(
      (await t.call('GET', '/v1/platforms')).body.items?.map((p) => p.platformKey),
    ).not.toContain('SHOP');
    expect(
      (await t.call('GET', '/v1/platforms?archived=true')).body.items?.map((p) => p.platformKey),
    ).toEqual(['SHOP']);
    expect((await t.call('POST', '/v1/platforms', { body: shop() })).status).toBe(409);
  });

  it('refuses to activate an archived platform; restore gives an inactive platform without keys', async () => {
    const refused = await t.call('POST', '/v1/platforms/SHOP/activate');
    expect(refused).toMatchObject({ status: 409, body: { code: 'PLATFORM_ARCHIVED' } });
    const restored = await t.call('POST', '/v1/platforms/SHOP/restore');
    expect(restored.body).toMatchObject({ status: 'inactive', credentials: [] });
    expect((await t.call('POST', '/v1/platforms/SHOP/restore')).body).toMatchObject({
      status: 'inactive',
    });
    const noKey = await t.call('POST', '/v1/platforms/SHOP/activate');
    expect(noKey).toMatchObject({
      status: 409,
      body: { code: 'PLATFORM_CREDENTIALS_NOT_CONFIGURED' },
    });
    const pairId = (restored.body.redirectPairs as Json[])[0]?.id;
    await t.call('POST', '/v1/platforms/SHOP/credentials', {
      body: { kind: 'bff', redirectPairId: pairId },
    });
    expect((await t.call('POST', '/v1/platforms/SHOP/activate')).body).toMatchObject({
      status: 'active',
      active: true,
    });
    expect(await auditKinds('SHOP')).toEqual(
      expect.arrayContaining([
        'platform.deactivated',
        'platform.archived',
        'platform.restored',
        'platform.activated',
      ]),
    );
  });

  it('refuses to activate a platform whose identity environment is inactive', async () => {
    await t.call('DELETE', '/v1/platforms/SHOP');
    await t.call('DELETE', '/v1/identity-environments/DEV');
    const refused = await t.call('POST', '/v1/platforms/SHOP/activate');
    expect(refused).toMatchObject({ status: 409, body: { code: 'IDENTITY_ENVIRONMENT_INACTIVE' } });
  });

  it('answers 404 for an unknown platform', async () => {
    expect((await t.call('GET', '/v1/platforms/NOPE')).status).toBe(404);
    expect((await t.call('POST', '/v1/platforms/NOPE/activate')).status).toBe(404);
  });
});

describe('the connections it uses', () => {
  // Reading a platform inside its create or update transaction once sent three queries at
  // once on the transaction's one connection: pg 8 warns, pg 9 will refuse.
  it('never sent a query on a connection still busy with another', () => {
    expect(sentWhileBusy).toEqual([]);
  });
});
