import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Validator } from '@seriousme/openapi-schema-validator';
import { GatewayError } from '@gateway/errors';
import { startTestOpenIdProvider, type TestOpenIdProvider } from '@gateway/testkit';
import {
  CREATED_AT,
  CREDENTIAL_ID,
  ISSUED_SECRET,
  PAIR_ID,
  type RegistryMethod,
} from '../testing/fake-registry.js';
import { startTestEdge, type TestEdge } from '../testing/edge-harness.js';

// The registry admin API of spec 4.10 and 4.11 (plus the audit list) over real HTTP: a real
// deployment machine token, the real edge, and a recording fake registry (the real one is
// being written in parallel; see testing/fake-registry.ts). What is proven here is the
// edge's part: routes and status codes, strict request validation before any service call,
// request mapping to the registry's messages and response mapping to the spec's JSON.

let provider: TestOpenIdProvider;
let edge: TestEdge;
let token: string;

beforeAll(async () => {
  provider = await startTestOpenIdProvider();
  edge = await startTestEdge({ IDENTITY_ISSUER: provider.issuer });
  token = await provider.machineToken({ scope: 'platforms:admin' });
});

afterAll(async () => {
  await edge.close();
  await provider.close();
});

beforeEach(() => {
  edge.registry.reset();
  edge.registry.issuers.set(provider.issuer, {
    environmentKey: 'PROD',
    active: true,
    deployment: true,
  });
});

type Answer = { status: number; headers: Headers; body: Record<string, unknown> };

async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${edge.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

/** Registry calls other than the authentication look-ups. */
function serviceCalls(): RegistryMethod[] {
  return edge.registry.calls
    .map((entry) => entry.method)
    .filter((method) => method !== 'resolveIssuer' && method !== 'getCorsOrigins');
}

function requestOf(method: RegistryMethod): Record<string, unknown> {
  const [request] = edge.registry.requestsOf(method);
  if (request === undefined) throw new Error(`${method} was not called`);
  return request;
}

const pair = {
  label: 'Web',
  returnUrl: 'https://shop.example.test',
  callbackUrl: 'https://shop.example.test/auth/callback',
  isDefault: true,
};
const createPlatform = {
  platformKey: 'SHOP',
  displayName: 'Shop',
  redirectPairs: [pair],
  defaultOnboardingMode: 'platform',
  metadata: { team: 'web', limits: { seats: 3 } },
};
const createEnvironment = {
  environmentKey: 'STAGING',
  displayName: 'Staging',
  tier: 'staging',
  issuer: 'https://id.staging.example.test/api/auth/env/STAGING',
  oidcClientId: 'gateway-staging',
  oidcClientSecret: 's3cret',
};
const credentialPath = `/v1/platforms/SHOP/credentials/${CREDENTIAL_ID}`;

const operations: {
  operationId: string;
  method: string;
  path: string;
  body?: unknown;
  status: number;
  rpc: RegistryMethod;
}[] = [
  {
    operationId: 'listPlatforms',
    method: 'GET',
    path: '/v1/platforms',
    status: 200,
    rpc: 'listPlatforms',
  },
  {
    operationId: 'createPlatform',
    method: 'POST',
    path: '/v1/platforms',
    body: createPlatform,
    status: 201,
    rpc: 'createPlatform',
  },
  {
    operationId: 'getPlatform',
    method: 'GET',
    path: '/v1/platforms/SHOP',
    status: 200,
    rpc: 'getPlatform',
  },
  {
    operationId: 'updatePlatform',
    method: 'PATCH',
    path: '/v1/platforms/SHOP',
    body: { displayName: 'Shop 2' },
    status: 200,
    rpc: 'updatePlatform',
  },
  {
    operationId: 'deactivatePlatform',
    method: 'DELETE',
    path: '/v1/platforms/SHOP',
    status: 200,
    rpc: 'deactivatePlatform',
  },
  {
    operationId: 'activatePlatform',
    method: 'POST',
    path: '/v1/platforms/SHOP/activate',
    status: 200,
    rpc: 'activatePlatform',
  },
  {
    operationId: 'archivePlatform',
    method: 'POST',
    path: '/v1/platforms/SHOP/archive',
    status: 200,
    rpc: 'archivePlatform',
  },
  {
    operationId: 'restorePlatform',
    method: 'POST',
    path: '/v1/platforms/SHOP/restore',
    status: 200,
    rpc: 'restorePlatform',
  },
  {
    operationId: 'createPlatformCredential',
    method: 'POST',
    path: '/v1/platforms/SHOP/credentials',
    body: { kind: 'backend' },
    status: 201,
    rpc: 'createPlatformCredential',
  },
  {
    operationId: 'rotatePlatformCredential',
    method: 'POST',
    path: `${credentialPath}/rotate`,
    status: 200,
    rpc: 'rotatePlatformCredential',
  },
  {
    operationId: 'revokePreviousPlatformCredentialSecret',
    method: 'DELETE',
    path: `${credentialPath}/previous-secret`,
    status: 200,
    rpc: 'revokePreviousPlatformCredentialSecret',
  },
  {
    operationId: 'deletePlatformCredential',
    method: 'DELETE',
    path: credentialPath,
    status: 200,
    rpc: 'deletePlatformCredential',
  },
  {
    operationId: 'listIdentityEnvironments',
    method: 'GET',
    path: '/v1/identity-environments',
    status: 200,
    rpc: 'listIdentityEnvironments',
  },
  {
    operationId: 'createIdentityEnvironment',
    method: 'POST',
    path: '/v1/identity-environments',
    body: createEnvironment,
    status: 201,
    rpc: 'createIdentityEnvironment',
  },
  {
    operationId: 'getIdentityEnvironment',
    method: 'GET',
    path: '/v1/identity-environments/STAGING',
    status: 200,
    rpc: 'getIdentityEnvironment',
  },
  {
    operationId: 'updateIdentityEnvironment',
    method: 'PATCH',
    path: '/v1/identity-environments/STAGING',
    body: { displayName: 'Stage' },
    status: 200,
    rpc: 'updateIdentityEnvironment',
  },
  {
    operationId: 'deactivateIdentityEnvironment',
    method: 'DELETE',
    path: '/v1/identity-environments/STAGING',
    status: 200,
    rpc: 'deactivateIdentityEnvironment',
  },
  {
    operationId: 'activateIdentityEnvironment',
    method: 'POST',
    path: '/v1/identity-environments/STAGING/activate',
    status: 200,
    rpc: 'activateIdentityEnvironment',
  },
  {
    operationId: 'validateIdentityEnvironment',
    method: 'POST',
    path: '/v1/identity-environments/STAGING/validate',
    status: 200,
    rpc: 'validateIdentityEnvironment',
  },
  {
    operationId: 'listAuditRecords',
    method: 'GET',
    path: '/v1/audit-records',
    status: 200,
    rpc: 'listAuditRecords',
  },
];

describe('every registry operation', () => {
  it.each(operations)(
    '$operationId: $method $path answers $status through $rpc',
    async ({ method, path, body, status, rpc }) => {
      const answer = await call(method, path, body);
      expect(answer.status).toBe(status);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(serviceCalls()).toEqual([rpc]);
    },
  );

  it.each(operations)('$operationId answers 401 without a token', async ({ method, path }) => {
    const response = await fetch(`${edge.url}${path}`, { method });
    expect(response.status).toBe(401);
    expect(serviceCalls()).toEqual([]);
  });

  it('is described in /openapi.json with its operationId, admin security and named schemas', async () => {
    const response = await fetch(`${edge.url}/openapi.json`);
    const document = (await response.json()) as {
      paths: Record<string, Record<string, { operationId: string; security: unknown }>>;
      components: { schemas: Record<string, unknown> };
    };
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    for (const operation of operations) {
      const openApiPath = operation.path
        .replace('/SHOP', '/{platformKey}')
        .replace('/STAGING', '/{environmentKey}')
        .replace(CREDENTIAL_ID, '{credentialId}');
      const described = document.paths[openApiPath]?.[operation.method.toLowerCase()];
      expect(described?.operationId).toBe(operation.operationId);
      expect(described?.security).toEqual([
        { serviceBearerAuth: [] },
        { userBearerAuth: [] },
        { gatewayCookieAuth: [] },
      ]);
    }
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining([
        'Platform',
        'IdentityEnvironment',
        'RedirectPair',
        'Credential',
        'IssuedCredential',
        'CredentialResponse',
        'PlatformList',
        'IdentityEnvironmentList',
        'ValidationReport',
        'AuditRecord',
        'AuditRecordList',
        'ErrorBody',
      ]),
    );
  });
});

describe('request validation (400 before any service call)', () => {
  const rejected: [string, string, string, unknown, string?][] = [
    [
      'a platform with callbackUrl',
      'POST',
      '/v1/platforms',
      { ...createPlatform, callbackUrl: 'https://x.test/cb' },
      'callbackUrl',
    ],
    [
      'a platform with allowedReturnUrls',
      'POST',
      '/v1/platforms',
      { ...createPlatform, allowedReturnUrls: ['https://x.test'] },
      'allowedReturnUrls',
    ],
    [
      'a platform with an unknown property',
      'POST',
      '/v1/platforms',
      { ...createPlatform, colour: 'red' },
      'colour',
    ],
    [
      'a platform key that is not upper case',
      'POST',
      '/v1/platforms',
      { ...createPlatform, platformKey: 'shop' },
      'platformKey',
    ],
    [
      'a platform without redirect pairs',
      'POST',
      '/v1/platforms',
      { ...createPlatform, redirectPairs: [] },
      'redirectPairs',
    ],
    [
      'a pair with an unknown property',
      'POST',
      '/v1/platforms',
      { ...createPlatform, redirectPairs: [{ ...pair, allowedReturnUrls: [] }] },
      'redirectPairs.0',
    ],
    [
      'a pair with a non-http URL',
      'POST',
      '/v1/platforms',
      { ...createPlatform, redirectPairs: [{ ...pair, callbackUrl: 'javascript:alert(1)' }] },
      'redirectPairs.0.callbackUrl',
    ],
    [
      'an unknown onboarding mode',
      'POST',
      '/v1/platforms',
      { ...createPlatform, defaultOnboardingMode: 'sometimes' },
      'defaultOnboardingMode',
    ],
    [
      'a PATCH with callbackUrl',
      'PATCH',
      '/v1/platforms/SHOP',
      { callbackUrl: 'https://x.test/cb' },
      'callbackUrl',
    ],
    [
      'a PATCH with allowedReturnUrls',
      'PATCH',
      '/v1/platforms/SHOP',
      { allowedReturnUrls: [] },
      'allowedReturnUrls',
    ],
    [
      'a PATCH changing the platform key',
      'PATCH',
      '/v1/platforms/SHOP',
      { platformKey: 'OTHER' },
      'platformKey',
    ],
    ['an empty platform PATCH', 'PATCH', '/v1/platforms/SHOP', {}],
    ['a PATCH without a body', 'PATCH', '/v1/platforms/SHOP', ''],
    [
      'a bff key without its pair',
      'POST',
      '/v1/platforms/SHOP/credentials',
      { kind: 'bff' },
      'redirectPairId',
    ],
    [
      'a backend key with a pair',
      'POST',
      '/v1/platforms/SHOP/credentials',
      { kind: 'backend', redirectPairId: PAIR_ID },
      'redirectPairId',
    ],
    [
      'a rotate option that is not known',
      'POST',
      `${credentialPath}/rotate`,
      { revokeNow: true },
      'revokeNow',
    ],
    [
      'a credential id that is not a UUID',
      'DELETE',
      '/v1/platforms/SHOP/credentials/abc',
      undefined,
      'credentialId',
    ],
    [
      'an environment key that is too long',
      'POST',
      '/v1/identity-environments',
      { ...createEnvironment, environmentKey: `E${'X'.repeat(32)}` },
      'environmentKey',
    ],
    [
      'an environment without a client id',
      'POST',
      '/v1/identity-environments',
      { ...createEnvironment, oidcClientId: undefined },
      'oidcClientId',
    ],
    [
      'an environment with an unknown property',
      'POST',
      '/v1/identity-environments',
      { ...createEnvironment, secret: 'x' },
      'secret',
    ],
    [
      'a non-http post-logout URI',
      'POST',
      '/v1/identity-environments',
      { ...createEnvironment, postLogoutRedirectUri: 'ftp://x.test' },
      'postLogoutRedirectUri',
    ],
    ['an empty environment PATCH', 'PATCH', '/v1/identity-environments/STAGING', {}],
    [
      'an environment PATCH of its key',
      'PATCH',
      '/v1/identity-environments/STAGING',
      { environmentKey: 'X1' },
      'environmentKey',
    ],
    ['an unknown list filter', 'GET', '/v1/platforms?callbackUrl=x', undefined, 'callbackUrl'],
    ['an audit page size over 100', 'GET', '/v1/audit-records?pageSize=101', undefined, 'pageSize'],
    ['an audit page of 0', 'GET', '/v1/audit-records?page=0', undefined, 'page'],
    ['malformed JSON', 'POST', '/v1/platforms', '{"platformKey":'],
  ];

  // Objects, not tuples: Jest would take a missing last tuple element for a done callback.
  const cases = rejected.map(([name, method, path, body, field]) => ({
    name,
    method,
    path,
    body,
    field,
  }));
  it.each(cases)('rejects $name', async ({ method, path, body, field }) => {
    const answer = await call(method, path, body);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('VALIDATION_ERROR');
    if (field !== undefined) expect(JSON.stringify(answer.body.details)).toContain(field);
    expect(serviceCalls()).toEqual([]);
  });

  it('rejects a body that is not JSON with 415', async () => {
    const response = await fetch(`${edge.url}/v1/platforms`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
      body: 'platformKey=SHOP',
    });
    expect(response.status).toBe(415);
    expect(serviceCalls()).toEqual([]);
  });

  it('authenticates before it validates', async () => {
    const response = await fetch(`${edge.url}/v1/platforms`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ callbackUrl: 'x' }),
    });
    expect(response.status).toBe(401);
  });
});

describe('requests as the registry receives them', () => {
  it('passes a new platform on, with the caller as audit actor', async () => {
    await call('POST', '/v1/platforms', createPlatform);
    const request = requestOf('createPlatform');
    expect(request).toMatchObject({
      platformKey: 'SHOP',
      displayName: 'Shop',
      redirectPairs: [expect.objectContaining(pair)],
      defaultOnboardingMode: 'platform',
      metadata: { team: 'web', limits: { seats: 3 } },
      context: { actor: { kind: 'machine', environmentKey: 'PROD' } },
    });
    expect(request.identityEnvironmentKey).toBeUndefined();
    expect(request.centralOnboardingEnabled).toBeUndefined();
  });

  it('replaces redirect pairs only when a PATCH carries them', async () => {
    await call('PATCH', '/v1/platforms/SHOP', { redirectPairs: [{ ...pair, id: PAIR_ID }] });
    expect(requestOf('updatePlatform')).toMatchObject({
      platformKey: 'SHOP',
      replaceRedirectPairs: true,
      redirectPairs: [expect.objectContaining({ id: PAIR_ID, returnUrl: pair.returnUrl })],
    });
    edge.registry.reset();
    await call('PATCH', '/v1/platforms/SHOP', { identityEnvironmentKey: 'STAGING' });
    expect(requestOf('updatePlatform')).toMatchObject({
      identityEnvironmentKey: 'STAGING',
      replaceRedirectPairs: false,
      redirectPairs: [],
    });
  });

  it('distinguishes an absent, a set and a cleared nullable field', async () => {
    await call('PATCH', '/v1/platforms/SHOP', { platformOnboardingPath: null });
    const cleared = requestOf('updatePlatform').platformOnboardingPath as { value?: string };
    expect(cleared).toBeDefined();
    expect(cleared.value).toBeUndefined();

    edge.registry.reset();
    await call('PATCH', '/v1/identity-environments/STAGING', {
      oidcClientSecret: 'new-secret',
      postLogoutRedirectUri: null,
    });
    const update = requestOf('updateIdentityEnvironment');
    expect((update.oidcClientSecret as { value?: string }).value).toBe('new-secret');
    expect(update.postLogoutRedirectUri).toBeDefined();
    expect((update.postLogoutRedirectUri as { value?: string }).value).toBeUndefined();
    expect(update.displayName).toBeUndefined();
    expect(update.issuer).toBeUndefined();
  });

  it('passes credential kinds and rotation options', async () => {
    await call('POST', '/v1/platforms/SHOP/credentials', { kind: 'bff', redirectPairId: PAIR_ID });
    expect(requestOf('createPlatformCredential')).toMatchObject({
      kind: 'bff',
      redirectPairId: PAIR_ID,
    });
    await call('POST', `${credentialPath}/rotate`, { rotateClientId: true });
    expect(requestOf('rotatePlatformCredential')).toMatchObject({
      credentialId: CREDENTIAL_ID,
      rotateClientId: true,
      revokePreviousImmediately: false,
    });
  });

  it('passes list filters and audit paging with their defaults', async () => {
    await call('GET', '/v1/platforms?archived=true&identityEnvironmentKey=STAGING');
    expect(requestOf('listPlatforms')).toMatchObject({
      archived: true,
      identityEnvironmentKey: 'STAGING',
    });
    await call('GET', '/v1/audit-records?targetKey=SHOP');
    expect(requestOf('listAuditRecords')).toMatchObject({
      targetKey: 'SHOP',
      page: 1,
      pageSize: 25,
    });
  });
});

describe('responses in the JSON of spec 2.1-2.4', () => {
  const expectedPlatform = {
    id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
    platformKey: 'SHOP',
    displayName: 'Shop',
    active: true,
    status: 'active',
    requirementVersion: 3,
    centralOnboardingEnabled: false,
    adminConsole: false,
    platformOnboardingPath: null,
    defaultOnboardingMode: 'platform',
    credentialsConfigured: true,
    credentials: [
      {
        id: CREDENTIAL_ID,
        kind: 'bff',
        redirectPairId: PAIR_ID,
        clientId: 'pc_shop_bff',
        createdAt: CREATED_AT,
        rotatedAt: null,
        lastUsedAt: null,
        previousSecretExpiresAt: null,
      },
      {
        id: '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f',
        kind: 'backend',
        redirectPairId: null,
        clientId: 'pc_shop_backend',
        createdAt: CREATED_AT,
        rotatedAt: null,
        lastUsedAt: CREATED_AT,
        previousSecretExpiresAt: null,
      },
    ],
    redirectPairs: [{ id: PAIR_ID, ...pair }],
    identityEnvironment: {
      key: 'PROD',
      displayName: 'Production',
      tier: 'production',
      active: true,
    },
    metadata: {},
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
  };

  it('maps a platform exactly, with nulls and without secrets', async () => {
    const { body } = await call('GET', '/v1/platforms/SHOP');
    expect(body).toEqual(expectedPlatform);
    expect(JSON.stringify(body)).not.toMatch(/clientSecret|\$typeName|allowedReturnUrls/);
    expect(JSON.stringify(body)).not.toContain(ISSUED_SECRET);
  });

  it('lists platforms in an { items } envelope', async () => {
    const { body } = await call('GET', '/v1/platforms');
    expect(Object.keys(body)).toEqual(['items']);
    expect(body.items).toEqual([expectedPlatform, { ...expectedPlatform, platformKey: 'BLOG' }]);
  });

  it('returns issued secrets once, on create, rotate and PATCH responses', async () => {
    const issued = {
      id: CREDENTIAL_ID,
      kind: 'bff',
      redirectPairId: PAIR_ID,
      clientId: 'pc_shop_bff',
      clientSecret: ISSUED_SECRET,
    };
    const created = await call('POST', '/v1/platforms', createPlatform);
    expect(created.body).toEqual({ platform: expectedPlatform, credentials: [issued] });
    const rotated = await call('POST', `${credentialPath}/rotate`);
    expect(rotated.body).toEqual({ platform: expectedPlatform, credentials: [issued] });
    const patched = await call('PATCH', '/v1/platforms/SHOP', { displayName: 'Shop' });
    expect(patched.body).toEqual({ platform: expectedPlatform, credentials: [issued] });
  });

  it('maps environments, adding platforms on the single GET only, never the secret', async () => {
    const listed = await call('GET', '/v1/identity-environments');
    const environment = {
      id: '3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5a6b7',
      environmentKey: 'STAGING',
      displayName: 'Staging',
      tier: 'staging',
      source: 'database',
      active: true,
      issuer: 'https://id.staging.example.test/api/auth/env/STAGING',
      oidcClientId: 'gateway-staging',
      oidcClientSecretConfigured: true,
      postLogoutRedirectUri: null,
      // An additional field (spec 9): where the identity provider sends logout tokens.
      backchannelLogoutUrl: 'http://localhost:8080/v1/auth/backchannel-logout/STAGING',
      grantsGatewayPermissions: false,
      metadata: { owner: 'team-a', tags: ['x'] },
      platformCount: 2,
      activePlatformCount: 1,
      createdAt: CREATED_AT,
      updatedAt: CREATED_AT,
    };
    expect(listed.body).toEqual({ items: [environment] });
    const single = await call('GET', '/v1/identity-environments/STAGING');
    expect(single.body).toEqual({
      ...environment,
      platforms: [{ platformKey: 'SHOP', displayName: 'Shop', active: true }],
    });
    const created = await call('POST', '/v1/identity-environments', createEnvironment);
    expect(created.body).toEqual(environment);
    expect(JSON.stringify(created.body)).not.toContain('s3cret');
  });

  it('maps a validation report', async () => {
    const { body } = await call('POST', '/v1/identity-environments/STAGING/validate');
    expect(body).toEqual({
      environmentKey: 'STAGING',
      ok: false,
      checks: [
        { name: 'discovery', status: 'pass', message: 'Discovery matches.' },
        { name: 'secret', status: 'fail', message: 'The stored secret does not decrypt.' },
      ],
    });
  });

  it('maps audit records with null for what the actor did not have', async () => {
    const { body } = await call('GET', '/v1/audit-records?page=2&pageSize=10');
    expect(body).toEqual({
      items: [
        {
          id: '7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a',
          kind: 'platform.credential_rotated',
          actor: {
            kind: 'machine',
            subject: null,
            clientId: 'test-machine',
            environmentKey: 'PROD',
            email: null,
          },
          targetType: 'platform',
          targetId: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
          targetKey: 'SHOP',
          details: { credentialId: CREDENTIAL_ID },
          requestId: 'req-1',
          createdAt: CREATED_AT,
        },
      ],
      total: 1,
      page: 2,
      pageSize: 10,
    });
  });

  it('answers a registry error with its spec code and status', async () => {
    edge.registry.failNextWith(
      new GatewayError('PLATFORM_ARCHIVED', 'The platform is archived.', {
        details: { platformKey: 'SHOP' },
      }),
    );
    const archived = await call('POST', '/v1/platforms/SHOP/activate');
    expect(archived).toMatchObject({
      status: 409,
      body: { code: 'PLATFORM_ARCHIVED', details: { platformKey: 'SHOP' } },
    });
    edge.registry.failNextWith(
      new GatewayError('IDENTITY_ENVIRONMENT_NOT_FOUND', 'No such identity environment.'),
    );
    const unknown = await call('POST', '/v1/platforms', {
      ...createPlatform,
      identityEnvironmentKey: 'NOPE',
    });
    expect(unknown).toMatchObject({
      status: 400,
      body: { code: 'IDENTITY_ENVIRONMENT_NOT_FOUND' },
    });
  });
});
