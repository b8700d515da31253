import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import {
  startTestOpenIdProvider,
  testMachineScopes,
  type TestClient,
  type TestOpenIdProvider,
} from '@gateway/testkit';
import { startTestEdge, type TestEdge } from '../testing/edge-harness.js';

// Bearer authentication of the admin routes (spec 5) against real OpenID Providers: tokens
// are obtained at a real token endpoint and verified through real discovery and JWKS. The
// registry is a recording fake (see testing/fake-registry.ts) that says which issuer belongs
// to which environment.

const secret = () => randomBytes(24).toString('base64url');
const machineClient = (clientId: string): TestClient => ({
  clientId,
  clientSecret: secret(),
  redirectUris: [],
  postLogoutRedirectUris: [],
  scopes: [...testMachineScopes],
});

let prod: TestOpenIdProvider;
let dev: TestOpenIdProvider;
let stranger: TestOpenIdProvider;
let retired: TestOpenIdProvider;
let edge: TestEdge;

beforeAll(async () => {
  prod = await startTestOpenIdProvider({
    clients: [
      {
        clientId: 'test-gateway',
        clientSecret: secret(),
        redirectUris: ['http://localhost:8080/v1/auth/callback'],
        postLogoutRedirectUris: [],
      },
      machineClient('test-machine'),
      machineClient('shop-machine'),
    ],
    // A machine client limited to one platform (spec 5 rule 4).
    extraClaims: (clientId) => (clientId === 'shop-machine' ? { svc_platform: 'SHOP' } : {}),
  });
  dev = await startTestOpenIdProvider({ environmentKey: 'DEV' });
  stranger = await startTestOpenIdProvider({ environmentKey: 'OTHER' });
  retired = await startTestOpenIdProvider({ environmentKey: 'RETIRED' });
  edge = await startTestEdge({ IDENTITY_ISSUER: prod.issuer });
});

afterAll(async () => {
  await edge.close();
  await Promise.all([prod.close(), dev.close(), stranger.close(), retired.close()]);
});

beforeEach(() => {
  edge.registry.reset();
  edge.registry.issuers.clear();
  edge.registry.issuers.set(prod.issuer, {
    environmentKey: 'PROD',
    active: true,
    deployment: true,
  });
  edge.registry.issuers.set(dev.issuer, { environmentKey: 'DEV', active: true, deployment: false });
  edge.registry.issuers.set(retired.issuer, {
    environmentKey: 'RETIRED',
    active: false,
    deployment: false,
  });
  // `stranger` is not registered: its issuer is unknown.
});

async function listPlatforms(headers: Record<string, string> = {}) {
  const response = await fetch(`${edge.url}/v1/platforms`, { headers });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('401 UNAUTHORIZED without valid credentials', () => {
  it('answers a request without credentials with WWW-Authenticate: Bearer', async () => {
    const { status, headers, body } = await listPlatforms();
    expect(status).toBe(401);
    expect(body.code).toBe('UNAUTHORIZED');
    expect(headers.get('www-authenticate')).toBe('Bearer');
    expect(edge.registry.requestsOf('listPlatforms')).toHaveLength(0);
  });

  it('takes a session cookie as the user of that session: without permissions, 403 (spec 5)', async () => {
    const { status, body } = await listPlatforms({ cookie: 'svc_auth_session=anything' });
    expect(status).toBe(403);
    expect(body.code).toBe('FORBIDDEN');
    expect(edge.authFlow.requestsOf('authenticateSession')).toContainEqual(
      expect.objectContaining({ sessionToken: 'anything' }),
    );
  });

  it('does not take Basic (platform) credentials as admin credentials', async () => {
    const basic = `Basic ${Buffer.from('pc_shop_bff:secret').toString('base64')}`;
    const { status, headers } = await listPlatforms({ authorization: basic });
    expect(status).toBe(401);
    expect(headers.get('www-authenticate')).toBe('Bearer');
  });

  it('rejects a token that is not a JWT', async () => {
    const { status, headers, body } = await listPlatforms(bearer('garbage'));
    expect(status).toBe(401);
    expect(body.code).toBe('UNAUTHORIZED');
    expect(headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });

  it('rejects an ID token', async () => {
    const { idToken } = await prod.userTokens({ accountId: 'user-1', nonce: 'n-1' });
    const { status, body } = await listPlatforms(bearer(idToken));
    expect(status).toBe(401);
    expect(body.code).toBe('UNAUTHORIZED');
  });

  it('rejects a machine token for another audience', async () => {
    const token = await prod.machineToken({ resource: 'https://other-api.example.test' });
    const { status, body } = await listPlatforms(bearer(token));
    expect(status).toBe(401);
    expect(body.message).toMatch(/audience/);
  });

  it('rejects a token from an issuer the registry does not know', async () => {
    const { status, body } = await listPlatforms(bearer(await stranger.machineToken()));
    expect(status).toBe(401);
    expect(body.code).toBe('UNAUTHORIZED');
    expect(edge.registry.requestsOf('resolveIssuer')).toEqual([
      expect.objectContaining({ issuer: stranger.issuer }),
    ]);
  });

  it('rejects a token from an inactive environment', async () => {
    const { status } = await listPlatforms(bearer(await retired.machineToken()));
    expect(status).toBe(401);
    expect(edge.registry.requestsOf('resolveIssuer')).toHaveLength(1);
  });

  it("rejects a token whose signature is not its issuer key's", async () => {
    // The claims of a registered provider's token with another provider's signature.
    const [header, payload] = (await dev.machineToken()).split('.');
    const [, , prodSignature] = (await prod.machineToken()).split('.');
    const { status, body } = await listPlatforms(bearer(`${header}.${payload}.${prodSignature}`));
    expect(status).toBe(401);
    expect(body.message).toMatch(/signature|key/);
  });
});

describe('403 FORBIDDEN without the permission', () => {
  it('refuses a deployment machine token without the platforms:admin scope', async () => {
    const token = await prod.machineToken({ scope: 'onboarding:schema:read' });
    const { status, body } = await listPlatforms(bearer(token));
    expect(status).toBe(403);
    expect(body).toMatchObject({ code: 'FORBIDDEN', details: { permission: 'platforms:admin' } });
  });

  it('refuses a machine token of a non-deployment environment even with the scope', async () => {
    const token = await dev.machineToken({ scope: 'platforms:admin' });
    const { status, body } = await listPlatforms(bearer(token));
    expect(status).toBe(403);
    expect(body.code).toBe('FORBIDDEN');
  });

  it('refuses a deployment user token (no local roles yet)', async () => {
    const { accessToken } = await prod.userTokens({ accountId: 'user-1' });
    const { status, body } = await listPlatforms(bearer(accessToken));
    expect(status).toBe(403);
    expect(body.code).toBe('FORBIDDEN');
  });

  it('refuses a machine token limited to one platform on the registry routes', async () => {
    const token = await prod.machineToken({ clientId: 'shop-machine', scope: 'platforms:admin' });
    const { status, body } = await listPlatforms(bearer(token));
    expect(status).toBe(403);
    expect(body.code).toBe('FORBIDDEN');
    const single = await fetch(`${edge.url}/v1/platforms/SHOP`, { headers: bearer(token) });
    expect(single.status).toBe(403);
  });
});

describe('an authorised caller', () => {
  it('is served with a deployment machine token carrying platforms:admin', async () => {
    const token = await prod.machineToken({ scope: 'platforms:admin' });
    const { status, body } = await listPlatforms(bearer(token));
    expect(status).toBe(200);
    expect(body.items).toHaveLength(2);
  });

  it('is named in the audit context of a change', async () => {
    const token = await prod.machineToken({ scope: 'platforms:admin' });
    const response = await fetch(`${edge.url}/v1/platforms/SHOP/activate`, {
      method: 'POST',
      headers: { ...bearer(token), 'x-request-id': 'req-audit-1' },
    });
    expect(response.status).toBe(200);
    const [request] = edge.registry.requestsOf('activatePlatform');
    expect(request?.context).toMatchObject({
      actor: { kind: 'machine', clientId: 'test-machine', environmentKey: 'PROD', email: '' },
      requestId: 'req-audit-1',
    });
  });

  it('resolves each issuer once and reuses the answer', async () => {
    const token = await prod.machineToken({ scope: 'platforms:admin' });
    expect((await listPlatforms(bearer(token))).status).toBe(200);
    edge.registry.reset();
    for (let i = 0; i < 3; i += 1) expect((await listPlatforms(bearer(token))).status).toBe(200);
    expect(edge.registry.requestsOf('resolveIssuer')).toHaveLength(0);
  });

  it('sees a deactivated environment at once after a change made through this edge', async () => {
    const token = await dev.machineToken();
    await listPlatforms(bearer(token)); // resolved and cached as active (403: no permission)
    edge.registry.issuers.set(dev.issuer, {
      environmentKey: 'DEV',
      active: false,
      deployment: false,
    });
    const adminToken = await prod.machineToken({ scope: 'platforms:admin' });
    const deactivate = await fetch(`${edge.url}/v1/identity-environments/DEV`, {
      method: 'DELETE',
      headers: bearer(adminToken),
    });
    expect(deactivate.status).toBe(200);
    expect((await listPlatforms(bearer(token))).status).toBe(401);
  });
});
