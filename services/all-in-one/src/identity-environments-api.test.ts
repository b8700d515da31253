import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestOpenIdProvider, type TestOpenIdProvider } from '@gateway/testkit';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';

// Spec 2.4, 3.5, 4.11 through the edge over HTTP, against PostgreSQL and real OpenID Providers.
let t: GatewayUnderTest;
let staging: TestOpenIdProvider;
let wrongIssuer: TestOpenIdProvider;

beforeAll(async () => {
  t = await startGatewayUnderTest();
  staging = await startTestOpenIdProvider({ environmentKey: 'STAGING' });
  wrongIssuer = await startTestOpenIdProvider({
    environmentKey: 'LIAR',
    advertisedIssuer: 'https://someone-else.example/api/auth/env/LIAR',
  });
});

afterAll(async () => {
  await t.close();
  await staging.close();
  await wrongIssuer.close();
});

const stagingBody = () => ({
  environmentKey: 'STAGING',
  displayName: 'Staging',
  tier: 'staging',
  issuer: staging.issuer,
  oidcClientId: 'test-gateway',
  oidcClientSecret: 'test-gateway-secret',
  postLogoutRedirectUri: 'http://localhost:3000/bye',
  metadata: { team: 'identity' },
});

const platformBody = (platformKey: string, identityEnvironmentKey: string) => ({
  platformKey,
  displayName: platformKey,
  identityEnvironmentKey,
  redirectPairs: [
    {
      label: 'web',
      returnUrl: `http://localhost:3000/${platformKey.toLowerCase()}`,
      callbackUrl: `http://localhost:3000/${platformKey.toLowerCase()}/callback`,
      isDefault: true,
    },
  ],
});

describe('the deployment environment (PROD)', () => {
  it('is seeded from configuration, first in the list, active and the only one granting permissions', async () => {
    const { status, body } = await t.call('GET', '/v1/identity-environments');
    expect(status).toBe(200);
    expect(body.items?.[0]).toMatchObject({
      environmentKey: 'PROD',
      source: 'deployment',
      active: true,
      issuer: t.provider.issuer,
      oidcClientId: 'test-gateway',
      oidcClientSecretConfigured: true,
      grantsGatewayPermissions: true,
      tier: 'development',
      // Where the identity provider sends its logout tokens (single logout).
      backchannelLogoutUrl: 'http://localhost:8080/v1/auth/backchannel-logout/PROD',
    });
    expect(JSON.stringify(body)).not.toContain('test-gateway-secret');
  });

  it('is read-only through the API (409)', async () => {
    expect(
      (await t.call('PATCH', '/v1/identity-environments/PROD', { body: { displayName: 'x' } }))
        .status,
    ).toBe(409);
    expect((await t.call('DELETE', '/v1/identity-environments/PROD')).status).toBe(409);
    const activated = await t.call('POST', '/v1/identity-environments/PROD/activate');
    expect(activated).toMatchObject({ status: 200, body: { active: true } });
  });
});

describe('database environments', () => {
  it('are created with a write-only secret (201) and audited', async () => {
    const { status, body } = await t.call('POST', '/v1/identity-environments', {
      body: stagingBody(),
    });
    expect(status).toBe(201);
    expect(body).toMatchObject({
      environmentKey: 'STAGING',
      source: 'database',
      tier: 'staging',
      active: true,
      issuer: staging.issuer,
      oidcClientSecretConfigured: true,
      grantsGatewayPermissions: false,
      postLogoutRedirectUri: 'http://localhost:3000/bye',
      metadata: { team: 'identity' },
      platformCount: 0,
      activePlatformCount: 0,
    });
    expect(JSON.stringify(body)).not.toContain('test-gateway-secret');
    const stored = await t.db
      .knex('registry.identity_environments')
      .where({ environment_key: 'STAGING' })
      .first();
    expect(stored.oidc_client_secret_encrypted).toMatch(/^v1\./);
    expect(stored.oidc_client_secret_encrypted).not.toContain('test-gateway-secret');
    const audit = await t.call(
      'GET',
      '/v1/audit-records?kind=identity_environment.created&targetKey=STAGING',
    );
    expect(audit.body.items?.[0]).toMatchObject({
      kind: 'identity_environment.created',
      targetKey: 'STAGING',
    });
  });

  it('refuse a duplicate key, a duplicate issuer and the deployment issuer (409)', async () => {
    expect(
      (await t.call('POST', '/v1/identity-environments', { body: stagingBody() })).status,
    ).toBe(409);
    const sameIssuer = { ...stagingBody(), environmentKey: 'STAGING_TWO' };
    expect((await t.call('POST', '/v1/identity-environments', { body: sameIssuer })).status).toBe(
      409,
    );
    const deploymentIssuer = {
      ...stagingBody(),
      environmentKey: 'COPY',
      issuer: t.provider.issuer,
    };
    expect(
      (await t.call('POST', '/v1/identity-environments', { body: deploymentIssuer })).status,
    ).toBe(409);
  });

  it.each([
    ['a lower-case key', { environmentKey: 'staging2' }],
    ['a one-letter key', { environmentKey: 'S' }],
    ['an http issuer off localhost', { environmentKey: 'E1', issuer: 'http://id.example.com' }],
    ['an issuer with a query', { environmentKey: 'E2', issuer: 'https://id.example.com?x=1' }],
    ['an issuer with a fragment', { environmentKey: 'E3', issuer: 'https://id.example.com#x' }],
    ['an issuer with credentials', { environmentKey: 'E4', issuer: 'https://u:p@id.example.com' }],
    [
      'a bad client id',
      { environmentKey: 'E5', issuer: 'https://e5.example.com', oidcClientId: 'has space' },
    ],
    ['an unknown tier', { environmentKey: 'E6', issuer: 'https://e6.example.com', tier: 'qa' }],
    [
      'an unknown property',
      { environmentKey: 'E7', issuer: 'https://e7.example.com', colour: 'red' },
    ],
  ])('refuse %s with 400 and write nothing', async (_name, change) => {
    const { status, body } = await t.call('POST', '/v1/identity-environments', {
      body: { ...stagingBody(), ...change },
    });
    expect(status).toBe(400);
    expect(body.code).toBe('VALIDATION_ERROR');
    const count = await t.db.knex('registry.identity_environments').count({ n: '*' });
    expect(Number(count[0]?.n)).toBe(2);
  });

  it('accept http issuers on localhost, 127.0.0.1, [::1] and *.localhost', async () => {
    for (const [key, issuer] of [
      ['LOCAL_A', 'http://localhost:9999/a'],
      ['LOCAL_B', 'http://127.0.0.1:9999/b'],
      ['LOCAL_C', 'http://[::1]:9999/c'],
      ['LOCAL_D', 'http://id.localhost/d'],
    ] as const) {
      const body = { ...stagingBody(), environmentKey: key, issuer, tier: 'development' };
      expect((await t.call('POST', '/v1/identity-environments', { body })).status).toBe(201);
    }
  });

  it('list in the spec order: deployment, production, staging, development, then key', async () => {
    await t.call('POST', '/v1/identity-environments', {
      body: {
        ...stagingBody(),
        environmentKey: 'LIVE',
        tier: 'production',
        issuer: 'https://live.example.com',
      },
    });
    const { body } = await t.call('GET', '/v1/identity-environments');
    expect(body.items?.map((item) => item.environmentKey)).toEqual([
      'PROD',
      'LIVE',
      'STAGING',
      'LOCAL_A',
      'LOCAL_B',
      'LOCAL_C',
      'LOCAL_D',
    ]);
  });

  it('patch needs at least one field; a null secret removes it; a string replaces it', async () => {
    expect((await t.call('PATCH', '/v1/identity-environments/LOCAL_A', { body: {} })).status).toBe(
      400,
    );
    const removed = await t.call('PATCH', '/v1/identity-environments/LOCAL_A', {
      body: { oidcClientSecret: null, postLogoutRedirectUri: null, displayName: 'Local A' },
    });
    expect(removed.body).toMatchObject({
      oidcClientSecretConfigured: false,
      postLogoutRedirectUri: null,
      displayName: 'Local A',
    });
    const replaced = await t.call('PATCH', '/v1/identity-environments/LOCAL_A', {
      body: { oidcClientSecret: 'again' },
    });
    expect(replaced.body).toMatchObject({ oidcClientSecretConfigured: true });
    expect((await t.call('GET', '/v1/identity-environments/NOPE')).status).toBe(404);
  });

  it('refuse a tier change while platforms are bound, and deactivation while active platforms use it', async () => {
    expect(
      (await t.call('POST', '/v1/platforms', { body: platformBody('STAGE_APP', 'STAGING') }))
        .status,
    ).toBe(201);
    const env = await t.call('GET', '/v1/identity-environments/STAGING');
    expect(env.body).toMatchObject({ platformCount: 1, activePlatformCount: 1 });
    expect(env.body.platforms).toEqual([
      { platformKey: 'STAGE_APP', displayName: 'STAGE_APP', active: true },
    ]);
    expect(
      (
        await t.call('PATCH', '/v1/identity-environments/STAGING', {
          body: { tier: 'development' },
        })
      ).status,
    ).toBe(409);
    expect(
      (await t.call('PATCH', '/v1/identity-environments/STAGING', { body: { tier: 'staging' } }))
        .status,
    ).toBe(200);
    expect((await t.call('DELETE', '/v1/identity-environments/STAGING')).status).toBe(409);

    expect((await t.call('DELETE', '/v1/platforms/STAGE_APP')).status).toBe(200);
    const deactivated = await t.call('DELETE', '/v1/identity-environments/STAGING');
    expect(deactivated).toMatchObject({ status: 200, body: { active: false } });
    // An inactive environment cannot take new platforms (spec 4.10).
    const refused = await t.call('POST', '/v1/platforms', {
      body: platformBody('STAGE_TWO', 'STAGING'),
    });
    expect(refused).toMatchObject({ status: 409, body: { code: 'IDENTITY_ENVIRONMENT_INACTIVE' } });
    const unknown = await t.call('POST', '/v1/platforms', {
      body: platformBody('STAGE_TWO', 'NOWHERE'),
    });
    expect(unknown).toMatchObject({
      status: 400,
      body: { code: 'IDENTITY_ENVIRONMENT_NOT_FOUND' },
    });
    const activated = await t.call('POST', '/v1/identity-environments/STAGING/activate');
    expect(activated).toMatchObject({ status: 200, body: { active: true } });
  });
});

describe('validate (spec 4.11)', () => {
  it('passes every check against a working provider', async () => {
    const { status, body } = await t.call('POST', '/v1/identity-environments/STAGING/validate');
    expect(status).toBe(200);
    expect(body.environmentKey).toBe('STAGING');
    expect(body.ok).toBe(true);
    expect(
      (body.checks as { name: string; status: string }[]).map((c) => [c.name, c.status]),
    ).toEqual([
      ['discovery', 'pass'],
      ['endpoints', 'pass'],
      ['jwks', 'pass'],
      ['client', 'pass'],
      ['secret', 'pass'],
    ]);
  });

  it('fails discovery when the provider reports another issuer', async () => {
    await t.call('POST', '/v1/identity-environments', {
      body: {
        ...stagingBody(),
        environmentKey: 'LIAR',
        issuer: wrongIssuer.issuer,
        tier: 'development',
      },
    });
    const { body } = await t.call('POST', '/v1/identity-environments/LIAR/validate');
    expect(body.ok).toBe(false);
    expect((body.checks as { name: string; status: string }[])[0]).toMatchObject({
      name: 'discovery',
      status: 'fail',
    });
  });

  it('fails discovery for an unreachable provider, and the secret check after the key changes until re-entered', async () => {
    const local = await t.call('POST', '/v1/identity-environments/LOCAL_B/validate');
    expect(
      (local.body.checks as { name: string; status: string }[]).find((c) => c.name === 'discovery')
        ?.status,
    ).toBe('fail');

    const rekeyed = await t.startAnother({
      IDENTITY_ENVIRONMENT_SECRET_KEY: 'another-secret-key-of-32-characters-or-more',
    });
    try {
      const before = await rekeyed.call('POST', '/v1/identity-environments/STAGING/validate');
      expect(before.body.ok).toBe(false);
      expect(
        (before.body.checks as { name: string; status: string }[]).find((c) => c.name === 'secret'),
      ).toMatchObject({ status: 'fail' });
      await rekeyed.call('PATCH', '/v1/identity-environments/STAGING', {
        body: { oidcClientSecret: 'test-gateway-secret' },
      });
      const after = await rekeyed.call('POST', '/v1/identity-environments/STAGING/validate');
      expect(after.body.ok).toBe(true);
    } finally {
      await rekeyed.close();
    }
  });

  it('answers 503 IDENTITY_ENVIRONMENT_SECRET_KEY_MISSING when a secret is sent without the key', async () => {
    const keyless = await t.startAnother({ IDENTITY_ENVIRONMENT_SECRET_KEY: '' });
    try {
      const { status, body } = await keyless.call('POST', '/v1/identity-environments', {
        body: {
          ...stagingBody(),
          environmentKey: 'KEYLESS',
          issuer: 'https://keyless.example.com',
        },
      });
      expect(status).toBe(503);
      expect(body.code).toBe('IDENTITY_ENVIRONMENT_SECRET_KEY_MISSING');
      expect((await keyless.call('GET', '/v1/identity-environments/KEYLESS')).status).toBe(404);
    } finally {
      await keyless.close();
    }
  });
});
