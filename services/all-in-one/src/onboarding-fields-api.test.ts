import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { testMachineScopes } from '@gateway/testkit';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';

// Spec 2.10-2.13, 3.6, 4.13 (platform fields) through the edge over HTTP against PostgreSQL.
let t: GatewayUnderTest;

const machine = (clientId: string) => ({
  clientId,
  clientSecret: randomBytes(24).toString('base64url'),
  redirectUris: [],
  postLogoutRedirectUris: [],
  scopes: [...testMachineScopes],
});

const platform = (platformKey: string) => ({
  platformKey,
  displayName: platformKey,
  redirectPairs: [
    {
      label: 'web',
      returnUrl: `http://localhost:3000/${platformKey.toLowerCase()}/`,
      callbackUrl: `http://localhost:3000/${platformKey.toLowerCase()}/callback`,
      isDefault: true,
    },
  ],
});

beforeAll(async () => {
  t = await startGatewayUnderTest(
    {},
    {
      clients: [
        {
          clientId: 'test-gateway',
          clientSecret: randomBytes(24).toString('base64url'),
          redirectUris: ['http://localhost:8080/v1/auth/callback'],
          postLogoutRedirectUris: ['http://localhost:8080/v1/auth/logged-out'],
        },
        machine('test-machine'),
        machine('shop-machine'),
      ],
      extraClaims: (clientId) => (clientId === 'shop-machine' ? { svc_platform: 'SHOP' } : {}),
    },
  );
  for (const key of ['SHOP', 'CLINIC']) {
    expect((await t.call('POST', '/v1/platforms', { body: platform(key) })).status).toBe(201);
  }
});
afterAll(async () => {
  await t.close();
});

const fields = (platformKey: string) => `/v1/platforms/${platformKey}/onboarding/fields`;

async function requirementVersion(platformKey: string): Promise<number> {
  const { status, body } = await t.call('GET', `/v1/platforms/${platformKey}`);
  expect(status).toBe(200);
  return body.requirementVersion as number;
}

/** The paths of a 400 VALIDATION_ERROR's issues. */
function issuePaths(body: Record<string, unknown>): string[] {
  expect(body.code).toBe('VALIDATION_ERROR');
  const details = body.details as { issues: { path: string }[] };
  return details.issues.map((issue) => issue.path);
}

describe('platform onboarding fields', () => {
  it('creates a field with defaults and increments requirementVersion by one', async () => {
    const before = await requirementVersion('SHOP');
    const { status, body } = await t.call('POST', fields('SHOP'), {
      body: { fieldKey: 'company', label: 'Company', fieldType: 'TEXT', source: 'CUSTOM_FIELD' },
    });
    expect(status).toBe(201);
    expect(body).toMatchObject({
      platformKey: 'SHOP',
      fieldKey: 'company',
      active: true,
      label: 'Company',
      fieldType: 'TEXT',
      source: 'CUSTOM_FIELD',
      profileFieldKey: null,
      description: null,
      placeholder: null,
      sortOrder: 0,
      required: false,
      options: [],
      validation: {},
      uiConfig: {},
    });
    expect(typeof body.id).toBe('string');
    expect(typeof body.createdAt).toBe('string');
    expect(await requirementVersion('SHOP')).toBe(before + 1);
  });

  it.each([
    ['options on TEXT', { fieldType: 'TEXT', options: [{ value: 'a', label: 'A' }] }, 'options'],
    ['HTML in the label', { label: '<b>Bold</b>' }, 'label'],
    ['an unsafe pattern', { validation: { pattern: '(a+)+$' } }, 'validation.pattern'],
    ['PROFILE_FIELD without profileFieldKey', { source: 'PROFILE_FIELD' }, 'profileFieldKey'],
    ['an unknown property', { colour: 'red' }, ''],
  ])('refuses %s with 400 naming the property', async (_name, change, path) => {
    const before = await requirementVersion('SHOP');
    const { status, body } = await t.call('POST', fields('SHOP'), {
      body: {
        fieldKey: 'invalidField',
        label: 'Invalid',
        fieldType: 'TEXT',
        source: 'CUSTOM_FIELD',
        ...change,
      },
    });
    expect(status).toBe(400);
    expect(issuePaths(body)).toContain(path);
    expect(await requirementVersion('SHOP')).toBe(before);
  });

  it('refuses a duplicate fieldKey with 409 CONFLICT', async () => {
    const before = await requirementVersion('SHOP');
    const { status, body } = await t.call('POST', fields('SHOP'), {
      body: { fieldKey: 'company', label: 'Again', fieldType: 'TEXT', source: 'CUSTOM_FIELD' },
    });
    expect(status).toBe(409);
    expect(body.code).toBe('CONFLICT');
    expect(await requirementVersion('SHOP')).toBe(before);
  });

  it('answers 404 for an unknown platform', async () => {
    const { status, body } = await t.call('POST', fields('NOWHERE'), {
      body: { fieldKey: 'company', label: 'Company', fieldType: 'TEXT', source: 'CUSTOM_FIELD' },
    });
    expect(status).toBe(404);
    expect(body.code).toBe('NOT_FOUND');
  });

  it('lists by sortOrder, then creation time', async () => {
    const create = async (fieldKey: string, sortOrder: number) =>
      expect(
        (
          await t.call('POST', fields('CLINIC'), {
            body: {
              fieldKey,
              label: fieldKey,
              fieldType: 'TEXT',
              source: 'CUSTOM_FIELD',
              sortOrder,
            },
          })
        ).status,
      ).toBe(201);
    await create('zLate', 5);
    await create('bFirst', 1);
    await create('aSecond', 5);
    const birth = await t.call('POST', fields('CLINIC'), {
      body: {
        fieldKey: 'birthday',
        label: 'Birthday',
        fieldType: 'DATE',
        source: 'PROFILE_FIELD',
        profileFieldKey: 'dateOfBirth',
        sortOrder: 3,
        required: true,
      },
    });
    expect(birth.status).toBe(201);
    const { status, body } = await t.call('GET', fields('CLINIC'));
    expect(status).toBe(200);
    expect(body.items?.map((item) => item.fieldKey)).toEqual([
      'bFirst',
      'birthday',
      'zLate',
      'aSecond',
    ]);
  });

  it('reads a field, and answers 404 for an unknown one', async () => {
    const found = await t.call('GET', `${fields('SHOP')}/company`);
    expect(found.status).toBe(200);
    expect(found.body.label).toBe('Company');
    const missing = await t.call('GET', `${fields('SHOP')}/nothingHere`);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('NOT_FOUND');
    expect((await t.call('GET', `${fields('CLINIC')}/company`)).status).toBe(404);
  });

  it('patches the label, keeps fieldKey immutable, and checks the merged definition', async () => {
    const before = await requirementVersion('SHOP');
    const patched = await t.call('PATCH', `${fields('SHOP')}/company`, {
      body: { label: 'Company name' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ fieldKey: 'company', label: 'Company name' });
    expect(await requirementVersion('SHOP')).toBe(before + 1);

    const renamed = await t.call('PATCH', `${fields('SHOP')}/company`, {
      body: { fieldKey: 'firm' },
    });
    expect(renamed.status).toBe(400);
    expect(renamed.body.code).toBe('VALIDATION_ERROR');

    // Only the merged definition shows that SELECT needs options.
    const select = await t.call('PATCH', `${fields('SHOP')}/company`, {
      body: { fieldType: 'SELECT' },
    });
    expect(select.status).toBe(400);
    expect(issuePaths(select.body)).toContain('options');

    const missing = await t.call('PATCH', `${fields('SHOP')}/nothingHere`, {
      body: { label: 'X' },
    });
    expect(missing.status).toBe(404);
    expect(await requirementVersion('SHOP')).toBe(before + 1);
    expect((await t.call('GET', `${fields('SHOP')}/company`)).body.label).toBe('Company name');
  });

  it('archives with DELETE and restores with PATCH active true, one version each', async () => {
    const start = await requirementVersion('SHOP');
    const archived = await t.call('DELETE', `${fields('SHOP')}/company`);
    expect(archived.status).toBe(200);
    expect(archived.body.active).toBe(false);
    expect(await requirementVersion('SHOP')).toBe(start + 1);

    // The admin list includes archived fields.
    const listed = await t.call('GET', fields('SHOP'));
    expect(listed.body.items?.find((item) => item.fieldKey === 'company')?.active).toBe(false);

    const restored = await t.call('PATCH', `${fields('SHOP')}/company`, {
      body: { active: true },
    });
    expect(restored.status).toBe(200);
    expect(restored.body.active).toBe(true);
    expect(await requirementVersion('SHOP')).toBe(start + 2);

    expect((await t.call('DELETE', `${fields('SHOP')}/nothingHere`)).status).toBe(404);
  });
});

describe('onboarding schema permissions', () => {
  it('answers 401 without credentials', async () => {
    expect((await t.call('GET', fields('SHOP'), { token: null })).status).toBe(401);
  });

  it('lets a read token read but not write', async () => {
    const token = await t.provider.machineToken({ scope: 'onboarding:schema:read' });
    expect((await t.call('GET', fields('SHOP'), { token })).status).toBe(200);
    expect((await t.call('GET', `${fields('SHOP')}/company`, { token })).status).toBe(200);
    const write = await t.call('POST', fields('SHOP'), {
      token,
      body: { fieldKey: 'readOnly', label: 'X', fieldType: 'TEXT', source: 'CUSTOM_FIELD' },
    });
    expect(write.status).toBe(403);
    expect(write.body.code).toBe('FORBIDDEN');
    expect((await t.call('DELETE', `${fields('SHOP')}/company`, { token })).status).toBe(403);
  });

  it('refuses a platforms:admin token without the schema scope', async () => {
    const token = await t.provider.machineToken({ scope: 'platforms:admin' });
    expect((await t.call('GET', fields('SHOP'), { token })).status).toBe(403);
  });

  it('limits a platform-scoped token to its own platform', async () => {
    const token = await t.provider.machineToken({
      clientId: 'shop-machine',
      scope: 'platforms:admin onboarding:schema:read onboarding:schema:write',
    });
    expect((await t.call('GET', fields('SHOP'), { token })).status).toBe(200);
    const own = await t.call('POST', fields('SHOP'), {
      token,
      body: { fieldKey: 'limitedOwn', label: 'Own', fieldType: 'TEXT', source: 'CUSTOM_FIELD' },
    });
    expect(own.status).toBe(201);
    expect((await t.call('GET', fields('CLINIC'), { token })).status).toBe(403);
    const other = await t.call('POST', fields('CLINIC'), {
      token,
      body: { fieldKey: 'limitedOther', label: 'X', fieldType: 'TEXT', source: 'CUSTOM_FIELD' },
    });
    expect(other.status).toBe(403);
    expect(other.body.code).toBe('FORBIDDEN');
    expect((await t.call('GET', `${fields('CLINIC')}/birthday`, { token })).status).toBe(403);
  });
});
