import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { testMachineScopes } from '@gateway/testkit';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';

// Spec 2.10-2.14, 3.6, 3.7, 4.8 (session bootstrap), 4.9 and 4.13 (global fields) over HTTP
// against PostgreSQL, with real user tokens (Bearer) from a real OpenID Provider.

let t: GatewayUnderTest;
const tokens: Record<string, string> = {};
const ACCOUNTS = ['ann', 'ben', 'cat', 'dan', 'eve', 'fay'];

const machine = (clientId: string, scopes: readonly string[] = testMachineScopes) => ({
  clientId,
  clientSecret: randomBytes(24).toString('base64url'),
  redirectUris: [],
  postLogoutRedirectUris: [],
  scopes: [...scopes],
});

const platform = (platformKey: string, displayName: string) => ({
  platformKey,
  displayName,
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
        machine('schema-machine', ['onboarding:schema:read', 'onboarding:schema:write']),
      ],
      accounts: ACCOUNTS.map((accountId) => ({
        accountId,
        email: `${accountId}@example.test`,
        emailVerified: true,
      })),
      extraClaims: (clientId) => (clientId === 'shop-machine' ? { svc_platform: 'SHOP' } : {}),
    },
  );
  for (const [key, name] of [
    ['SHOP', 'The Shop'],
    ['CLINIC', 'The Clinic'],
  ]) {
    expect((await t.call('POST', '/v1/platforms', { body: platform(key, name) })).status).toBe(201);
  }
  for (const accountId of ACCOUNTS) {
    tokens[accountId] = (await t.provider.userTokens({ accountId })).accessToken;
  }
});
afterAll(async () => {
  await t.close();
});

const GLOBAL = '/v1/admin/onboarding/global-fields';
const fields = (platformKey: string) => `/v1/platforms/${platformKey}/onboarding/fields`;
const as = (accountId: string) => ({ token: tokens[accountId] as string });

async function createField(platformKey: string, body: Record<string, unknown>) {
  const created = await t.call('POST', fields(platformKey), { body });
  expect(created.status).toBe(201);
  return created.body;
}

function issuesOf(body: Record<string, unknown>): { fieldKey?: string; path: string }[] {
  expect(body.code).toBe('VALIDATION_ERROR');
  return (body.details as { issues: { fieldKey?: string; path: string }[] }).issues;
}

describe('global onboarding fields (spec 4.13)', () => {
  it('creates, reads, lists, changes, archives and restores a global field, each change moving the global version', async () => {
    const version = async () =>
      (await t.call('GET', '/v1/onboarding/global/status', as('ann'))).body
        .requirementVersion as number;
    const before = await version();
    const created = await t.call('POST', GLOBAL, {
      body: {
        profileFieldKey: 'dateOfBirth',
        label: 'Date of birth',
        fieldType: 'DATE',
        sortOrder: 5,
        uiConfig: { width: 'half', helpText: 'As in your passport' },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      profileFieldKey: 'dateOfBirth',
      fieldKey: 'dateOfBirth',
      source: 'PROFILE_FIELD',
      active: true,
      required: false,
      options: [],
      validation: {},
    });
    expect(await version()).toBe(before + 1);
    expect((await t.call('GET', `${GLOBAL}/dateOfBirth`)).body).toEqual(created.body);
    const duplicate = await t.call('POST', GLOBAL, {
      body: { profileFieldKey: 'dateOfBirth', label: 'Again', fieldType: 'DATE' },
    });
    expect(duplicate.status).toBe(409);

    const archived = await t.call('DELETE', `${GLOBAL}/dateOfBirth`);
    expect(archived.body).toMatchObject({ active: false });
    const listed = await t.call('GET', GLOBAL);
    expect(listed.body.items).toEqual([
      expect.objectContaining({ fieldKey: 'dateOfBirth', active: false }),
    ]);
    const restored = await t.call('PATCH', `${GLOBAL}/dateOfBirth`, { body: { active: true } });
    expect(restored.body).toMatchObject({ active: true });
    // No-op PATCH: nothing changes, no version moves.
    const same = await version();
    await t.call('PATCH', `${GLOBAL}/dateOfBirth`, { body: { label: 'Date of birth' } });
    expect(await version()).toBe(same);
    expect(same).toBe(before + 3);
  });

  it('refuses a type the profile field cannot hold, unknown keys, a custom source and an unknown profile key', async () => {
    for (const body of [
      { profileFieldKey: 'dateOfBirth', label: 'x', fieldType: 'TEXT' },
      { profileFieldKey: 'phoneNumber', label: 'x', fieldType: 'PHONE', fieldKey: 'phone' },
      { profileFieldKey: 'bio', label: 'x', fieldType: 'TEXT', source: 'CUSTOM_FIELD' },
      { profileFieldKey: 'shoeSize', label: 'x', fieldType: 'NUMBER' },
      { profileFieldKey: 'gender', label: '<b>x</b>', fieldType: 'TEXT' },
    ]) {
      const refused = await t.call('POST', GLOBAL, { body });
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe('VALIDATION_ERROR');
    }
    expect((await t.call('GET', `${GLOBAL}/shoeSize`)).status).toBe(400);
    expect((await t.call('GET', `${GLOBAL}/timezone`)).status).toBe(404);
  });

  it('needs platforms:admin together with the schema scope; a user is 403; a limited credential cannot change them', async () => {
    const schemaOnly = await t.provider.machineToken({
      clientId: 'schema-machine',
      scope: 'onboarding:schema:read onboarding:schema:write',
    });
    expect((await t.call('GET', GLOBAL, { token: schemaOnly })).status).toBe(403);
    const adminOnly = await t.provider.machineToken({ scope: 'platforms:admin' });
    expect((await t.call('GET', GLOBAL, { token: adminOnly })).status).toBe(403);
    const readOnly = await t.provider.machineToken({
      scope: 'platforms:admin onboarding:schema:read',
    });
    expect((await t.call('GET', GLOBAL, { token: readOnly })).status).toBe(200);
    const write = await t.call('POST', GLOBAL, {
      token: readOnly,
      body: { profileFieldKey: 'bio', label: 'Bio', fieldType: 'TEXTAREA' },
    });
    expect(write.status).toBe(403);
    const limited = await t.provider.machineToken({
      clientId: 'shop-machine',
      scope: 'onboarding:schema:read onboarding:schema:write',
    });
    expect(
      (
        await t.call('POST', GLOBAL, {
          token: limited,
          body: { profileFieldKey: 'bio', label: 'Bio', fieldType: 'TEXTAREA' },
        })
      ).status,
    ).toBe(403);
    expect((await t.call('GET', GLOBAL, as('ann'))).status).toBe(403);
    expect((await t.call('GET', GLOBAL, { token: null })).status).toBe(401);
  });
});

describe('requirements, values and status (spec 2.14, 4.9)', () => {
  it('lists global fields first, then active platform fields in sortOrder, with current values; merges a platform duplicate of a global field', async () => {
    await t.call('POST', GLOBAL, {
      body: {
        profileFieldKey: 'residenceCountryCode',
        label: 'Country of residence',
        fieldType: 'COUNTRY',
        required: false,
        sortOrder: 1,
      },
    });
    await createField('CLINIC', {
      fieldKey: 'insurer',
      label: 'Insurer',
      fieldType: 'TEXT',
      source: 'CUSTOM_FIELD',
      sortOrder: 2,
    });
    await createField('CLINIC', {
      fieldKey: 'allergies',
      label: 'Allergies',
      fieldType: 'MULTI_SELECT',
      source: 'CUSTOM_FIELD',
      sortOrder: 1,
      options: [
        { value: 'nuts', label: 'Nuts' },
        { value: 'pollen', label: 'Pollen' },
      ],
    });
    await createField('CLINIC', {
      fieldKey: 'country',
      label: 'Where do you live?',
      fieldType: 'COUNTRY',
      source: 'PROFILE_FIELD',
      profileFieldKey: 'residenceCountryCode',
      required: true,
    });
    await createField('CLINIC', {
      fieldKey: 'retired',
      label: 'Retired field',
      fieldType: 'TEXT',
      source: 'CUSTOM_FIELD',
    });
    await t.call('DELETE', `${fields('CLINIC')}/retired`);

    const requirements = await t.call('GET', '/v1/onboarding/CLINIC/requirements', as('ann'));
    expect(requirements.status).toBe(200);
    expect(requirements.headers.get('cache-control')).toBe('no-store');
    const platformId = (await t.call('GET', '/v1/platforms/CLINIC')).body.id;
    expect(requirements.body).toMatchObject({
      platformKey: 'CLINIC',
      platformDisplayName: 'The Clinic',
      requirementVersion: 5,
    });
    const list = requirements.body.requirements as Record<string, unknown>[];
    expect(list.map((entry) => [entry.scope, entry.fieldKey, entry.platformId])).toEqual([
      ['GLOBAL', 'residenceCountryCode', null],
      ['GLOBAL', 'dateOfBirth', null],
      ['PLATFORM', 'allergies', platformId],
      ['PLATFORM', 'insurer', platformId],
    ]);
    // The merged entry is required because the platform's duplicate is.
    expect(list[0]).toMatchObject({ required: true, currentValue: null });
    expect(list[2]).toMatchObject({ currentValue: [] });

    const saved = await t.call('PUT', '/v1/onboarding/CLINIC/values', {
      ...as('ann'),
      body: {
        requirementVersion: 5,
        values: { residenceCountryCode: 'DE', allergies: ['nuts'], insurer: 'ACME' },
      },
    });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ status: 'IN_PROGRESS', missingFields: [] });
    const after = (await t.call('GET', '/v1/onboarding/CLINIC/requirements', as('ann'))).body
      .requirements as Record<string, unknown>[];
    expect(after.map((entry) => entry.currentValue)).toEqual(['DE', null, ['nuts'], 'ACME']);
    // PROFILE_FIELD values are shared: the global list and the platform field see them.
    const global = await t.call('GET', '/v1/onboarding/global/requirements', as('ann'));
    expect(global.body.requirements).toEqual([
      expect.objectContaining({ fieldKey: 'residenceCountryCode', currentValue: 'DE' }),
      expect.objectContaining({ fieldKey: 'dateOfBirth', currentValue: null }),
    ]);
    // CUSTOM_FIELD values are scoped to the platform: another user sees none of them.
    const other = (await t.call('GET', '/v1/onboarding/CLINIC/requirements', as('ben'))).body
      .requirements as Record<string, unknown>[];
    expect(other.map((entry) => entry.currentValue)).toEqual([null, null, [], null]);
  });

  it('validates every type and the validation object, names each offending field and saves nothing when one fails', async () => {
    const cases: [Record<string, unknown>, unknown, unknown][] = [
      [{ fieldType: 'NUMBER', validation: { min: 1, max: 10 } }, 11, 7],
      [{ fieldType: 'NUMBER' }, '7', 7.5],
      [{ fieldType: 'BOOLEAN' }, 'yes', false],
      [{ fieldType: 'DATE' }, '2023-02-30', '2024-02-29'],
      [{ fieldType: 'COUNTRY' }, 'de', 'FR'],
      [{ fieldType: 'PHONE' }, '030 1234567', '+49301234567'],
      [{ fieldType: 'EMAIL' }, 'not-an-address', 'a@example.org'],
      [{ fieldType: 'URL' }, 'ftp://example.org', 'https://example.org/x'],
      [{ fieldType: 'SELECT', options: [{ value: 'a', label: 'A' }] }, 'b', 'a'],
      [{ fieldType: 'MULTI_SELECT', options: [{ value: 'a', label: 'A' }] }, ['a', 'z'], ['a']],
      [{ fieldType: 'TEXT', validation: { minLength: 3, maxLength: 5 } }, 'ab', 'abcd'],
      [{ fieldType: 'TEXTAREA', validation: { pattern: '^[a-z ]+$' } }, 'ABC', 'all fine'],
    ];
    const keyOf = (index: number) => `kind${index}`;
    for (const [index, [definition]] of cases.entries()) {
      await createField('SHOP', {
        fieldKey: keyOf(index),
        label: `Field ${index}`,
        source: 'CUSTOM_FIELD',
        ...definition,
      });
    }
    await createField('SHOP', {
      fieldKey: 'companion',
      label: 'Sent beside each bad value',
      fieldType: 'TEXT',
      source: 'CUSTOM_FIELD',
    });
    const put = (values: Record<string, unknown>) =>
      t.call('PUT', '/v1/onboarding/SHOP/values', { ...as('cat'), body: { values } });
    for (const [index, [, bad, good]] of cases.entries()) {
      const refused = await put({ [keyOf(index)]: bad, companion: 'valid' });
      expect(refused.status).toBe(400);
      const issues = issuesOf(refused.body);
      expect(issues.map((issue) => issue.fieldKey)).toEqual([keyOf(index)]);
      expect(issues[0]?.path).toBe(`values.${keyOf(index)}`);
      expect((await put({ [keyOf(index)]: good })).status).toBe(200);
    }
    // Nothing of a refused request was saved: the valid companion value neither.
    const values = (await t.call('GET', '/v1/onboarding/SHOP/requirements', as('cat'))).body
      .requirements as Record<string, unknown>[];
    const byKey = Object.fromEntries(values.map((entry) => [entry.fieldKey, entry.currentValue]));
    expect(byKey).toMatchObject({
      companion: null,
      kind0: 7,
      kind1: 7.5,
      kind2: false,
      kind3: '2024-02-29',
      kind9: ['a'],
    });
    // Several bad values: each one named.
    const many = await put({ kind4: 'xx', kind5: 'nope', kind6: 1 });
    expect(
      issuesOf(many.body)
        .map((issue) => issue.fieldKey)
        .sort(),
    ).toEqual(['kind4', 'kind5', 'kind6']);
    // A key that is no field at all is a validation error, as is a malformed envelope.
    expect(issuesOf((await put({ noSuchField: 1 })).body)[0]?.fieldKey).toBe('noSuchField');
    const malformed = await t.call('PUT', '/v1/onboarding/SHOP/values', {
      ...as('cat'),
      body: { values: { kind0: 1 }, extra: true },
    });
    expect(malformed.status).toBe(400);
  });

  it('answers 404 when saving against a changed schema: a stale requirementVersion or an archived field', async () => {
    await createField('SHOP', {
      fieldKey: 'nickname2',
      label: 'Nick',
      fieldType: 'TEXT',
      source: 'CUSTOM_FIELD',
    });
    const version = (await t.call('GET', '/v1/onboarding/SHOP/requirements', as('dan'))).body
      .requirementVersion as number;
    const ok = await t.call('PUT', '/v1/onboarding/SHOP/values', {
      ...as('dan'),
      body: { requirementVersion: version, values: { nickname2: 'D' } },
    });
    expect(ok.status).toBe(200);
    await t.call('DELETE', `${fields('SHOP')}/nickname2`);
    const stale = await t.call('PUT', '/v1/onboarding/SHOP/values', {
      ...as('dan'),
      body: { requirementVersion: version, values: { kind0: 3 } },
    });
    expect(stale.status).toBe(404);
    expect(stale.body).toMatchObject({
      code: 'NOT_FOUND',
      details: { requirementVersion: version + 1 },
    });
    const archived = await t.call('PUT', '/v1/onboarding/SHOP/values', {
      ...as('dan'),
      body: { values: { nickname2: 'E' } },
    });
    expect(archived.status).toBe(404);
    expect(archived.body.details).toEqual({ fieldKey: 'nickname2' });
    // Archived definitions keep their values: restoring shows the saved one.
    await t.call('PATCH', `${fields('SHOP')}/nickname2`, { body: { active: true } });
    const restored = (await t.call('GET', '/v1/onboarding/SHOP/requirements', as('dan'))).body
      .requirements as Record<string, unknown>[];
    expect(restored.find((entry) => entry.fieldKey === 'nickname2')?.currentValue).toBe('D');
  });

  it('moves NOT_STARTED to IN_PROGRESS on save and COMPLETE on complete; complete is 409 while a required field is missing; a required BOOLEAN takes false', async () => {
    const path = '/v1/onboarding/SHOP';
    await createField('SHOP', {
      fieldKey: 'termsAccepted',
      label: 'Accept the terms?',
      fieldType: 'BOOLEAN',
      source: 'CUSTOM_FIELD',
      required: true,
      sortOrder: -1,
    });
    expect((await t.call('GET', `${path}/status`, as('eve'))).body).toMatchObject({
      status: 'NOT_STARTED',
      missingFields: ['termsAccepted'],
      completedAt: null,
      global: { status: 'COMPLETE', missingFields: [] },
    });
    const refused = await t.call('POST', `${path}/complete`, as('eve'));
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      code: 'CONFLICT',
      details: { missingFields: ['termsAccepted'] },
    });
    const saved = await t.call('PUT', `${path}/values`, {
      ...as('eve'),
      body: { values: { termsAccepted: false } },
    });
    expect(saved.body).toMatchObject({ status: 'IN_PROGRESS', missingFields: [] });
    const completed = await t.call('POST', `${path}/complete`, as('eve'));
    expect(completed.status).toBe(200);
    expect(completed.body).toMatchObject({ status: 'COMPLETE', completedAt: expect.any(String) });
    // Clearing a required value of a COMPLETE membership reopens it.
    const cleared = await t.call('PUT', `${path}/values`, {
      ...as('eve'),
      body: { values: { termsAccepted: null } },
    });
    expect(cleared.body).toMatchObject({ status: 'IN_PROGRESS', missingFields: ['termsAccepted'] });
  });

  it('bootstraps the membership idempotently (spec 4.8) and reports where onboarding stands', async () => {
    const bootstrap = () =>
      t.call('POST', '/v1/session/bootstrap', { ...as('fay'), body: { platformKey: 'CLINIC' } });
    const first = await bootstrap();
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      platformKey: 'CLINIC',
      environment: { key: 'PROD' },
      onboarding: {
        status: 'NOT_STARTED',
        missingFields: ['country'],
        canCompleteCentrally: false,
      },
      profile: { status: 'COMPLETE', missingFields: [] },
    });
    expect((await bootstrap()).body).toEqual(first.body);
    await t.call('PUT', '/v1/onboarding/global/values', {
      ...as('fay'),
      body: { values: { residenceCountryCode: 'SE' } },
    });
    // The platform's PROFILE_FIELD `country` is filled through the merged global field;
    // nothing required is missing any more: the bootstrap records COMPLETE (spec 3.7).
    expect((await bootstrap()).body).toMatchObject({
      onboarding: { status: 'COMPLETE', missingFields: [] },
      profile: { status: 'COMPLETE', missingFields: [] },
    });
    const unknown = await t.call('POST', '/v1/session/bootstrap', {
      ...as('fay'),
      body: { platformKey: 'NOPE' },
    });
    expect(unknown.status).toBe(404);
  });

  it('refuses machine tokens (403), missing credentials (401), unknown or inactive platforms (404)', async () => {
    expect((await t.call('GET', '/v1/onboarding/SHOP/status')).status).toBe(403);
    expect((await t.call('GET', '/v1/onboarding/global/status', { token: null })).status).toBe(401);
    expect((await t.call('GET', '/v1/onboarding/NOPE/requirements', as('ann'))).status).toBe(404);
    expect((await t.call('GET', '/v1/onboarding/shop/requirements', as('ann'))).status).toBe(400);
    expect((await t.call('DELETE', '/v1/platforms/CLINIC')).status).toBe(200);
    try {
      const inactive = await t.call('PUT', '/v1/onboarding/CLINIC/values', {
        ...as('ann'),
        body: { values: {} },
      });
      expect(inactive.status).toBe(404);
    } finally {
      await t.call('POST', '/v1/platforms/CLINIC/activate');
    }
  });

  it("applies the profile key's own limits to global values even when the definition sets none", async () => {
    await t.call('POST', GLOBAL, {
      body: { profileFieldKey: 'middleName', label: 'Middle name', fieldType: 'TEXT' },
    });
    const tooLong = await t.call('PUT', '/v1/onboarding/global/values', {
      ...as('ann'),
      body: { values: { middleName: 'x'.repeat(201) } },
    });
    expect(tooLong.status).toBe(400);
    expect(issuesOf(tooLong.body).map((issue) => issue.fieldKey)).toEqual(['middleName']);
    const fits = await t.call('PUT', '/v1/onboarding/global/values', {
      ...as('ann'),
      body: { values: { middleName: 'x'.repeat(200) } },
    });
    expect(fits.status).toBe(200);
  });
});
