import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import { loginSteps, sessionCookieOf } from './testing/login-steps.js';

// Spec 2.5, 4.8 (user details, profile, avatar) and 5 (user authentication) over real HTTP
// against PostgreSQL, with a real OpenID Provider for browser sign-in and user tokens.

const ALLOWED_ORIGIN = 'http://localhost:3000';
const PICTURE = 'https://images.example.test/user-1.png';
const BASE_URL = 'http://localhost:8080';
const ACCOUNTS = ['ann', 'ben', 'cat', 'dan', 'eve'];
const GLOBAL = '/v1/admin/onboarding/global-fields';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: GatewayUnderTest;
const tokens: Record<string, string> = {};

const as = (accountId: string) => ({ token: tokens[accountId] as string });
const cookieOf = (token: string) => `svc_auth_session=${encodeURIComponent(token)}`;

/** A fresh browser session of user-1. */
async function signIn(): Promise<string> {
  const { landed } = await loginSteps(t).signIn(t.provider, 'SHOP', '/');
  expect(landed.status).toBe(302);
  return sessionCookieOf(landed.headers).token;
}

type Issue = { location: string; path: string; message: string };

function issuesOf(answer: { status: number; body: Record<string, unknown> }): Issue[] {
  expect(answer.status).toBe(400);
  expect(answer.body.code).toBe('VALIDATION_ERROR');
  return (answer.body.details as { issues: Issue[] }).issues;
}

/** Spec 2.5, in its order. */
const canonicalProfileKeys = [
  'firstName',
  'middleName',
  'lastName',
  'nickname',
  'phoneNumber',
  'dateOfBirth',
  'gender',
  'bio',
  'nationalityCountryCode',
  'secondaryNationalityCountryCode',
  'residenceCountryCode',
  'preferredLocale',
  'timezone',
];
const emptyValues = Object.fromEntries(canonicalProfileKeys.map((key) => [key, null]));

beforeAll(async () => {
  t = await startGatewayUnderTest(
    {},
    {
      accounts: [
        {
          accountId: 'user-1',
          email: 'user-1@example.test',
          emailVerified: true,
          name: 'User One',
          picture: PICTURE,
        },
        ...ACCOUNTS.map((accountId) => ({
          accountId,
          email: `${accountId}@example.test`,
          emailVerified: true,
        })),
      ],
    },
  );
  const platform = await t.call('POST', '/v1/platforms', {
    body: {
      platformKey: 'SHOP',
      displayName: 'Shop',
      redirectPairs: [
        {
          label: 'web',
          returnUrl: 'http://localhost:3000/',
          callbackUrl: 'http://localhost:3000/auth/callback',
          isDefault: true,
        },
      ],
    },
  });
  expect(platform.status).toBe(201);
  for (const accountId of ACCOUNTS) {
    tokens[accountId] = (await t.provider.userTokens({ accountId })).accessToken;
  }
});

afterAll(async () => {
  await t.close();
});

// ---- images (only the magic bytes matter to the gateway) ----

const png = (size = 200) =>
  Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    randomBytes(size - 8),
  ]);
const jpeg = (size = 200) =>
  Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(size - 4)]);
const webp = (size = 200) =>
  Buffer.concat([
    Buffer.from('RIFF'),
    Buffer.from([0, 0, 0, 0]),
    Buffer.from('WEBP'),
    randomBytes(size - 12),
  ]);
const gif = (size = 200) => Buffer.concat([Buffer.from('GIF89a'), randomBytes(size - 6)]);

/** The gateway path of an absolute gateway URL (`{base_url}` is http://localhost:8080). */
function pathOf(url: string): string {
  expect(url.startsWith(`${BASE_URL}/`)).toBe(true);
  return new URL(url).pathname;
}

async function requestUpload(
  who: { token?: string | null; headers?: Record<string, string> },
  contentType: string,
  contentLength: number,
) {
  return t.call('POST', '/v1/profile/me/avatar/upload-request', {
    ...who,
    body: { contentType, contentLength },
  });
}

async function putImage(
  path: string,
  data: Buffer,
  options: { token?: string | null; contentType: string; headers?: Record<string, string> },
) {
  const headers: Record<string, string> = {
    'content-type': options.contentType,
    ...options.headers,
  };
  if (options.token !== undefined && options.token !== null) {
    headers.authorization = `Bearer ${options.token}`;
  }
  const response = await fetch(`${t.gateway.url}${path}`, { method: 'PUT', headers, body: data });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>,
  };
}

/** Reserves and uploads an image for `accountId`; answers the new avatarUrl. */
async function uploadAvatar(accountId: string, contentType: string, data: Buffer) {
  const reserved = await requestUpload(as(accountId), contentType, data.length);
  expect(reserved.status).toBe(201);
  const stored = await putImage(pathOf(reserved.body.uploadUrl as string), data, {
    ...as(accountId),
    contentType,
  });
  expect(stored.status).toBe(200);
  return stored.body.avatarUrl as string;
}

async function getAvatar(path: string) {
  const response = await fetch(`${t.gateway.url}${path}`);
  return { response, data: Buffer.from(await response.arrayBuffer()) };
}

const USER_ROUTES: [string, string][] = [
  ['GET', '/v1/users/me'],
  ['GET', '/v1/profile/me'],
  ['PATCH', '/v1/profile/me'],
  ['GET', '/v1/profile/me/details'],
  ['POST', '/v1/profile/me/avatar/upload-request'],
  ['PUT', '/v1/profile/me/avatar/uploads/00000000-0000-4000-8000-000000000000'],
];

describe('user authentication (spec 5)', () => {
  it('answers 401 without credentials on every profile route', async () => {
    for (const [method, path] of USER_ROUTES) {
      const answer = await t.call(method, path, { token: null });
      expect([method, path, answer.status]).toEqual([method, path, 401]);
      expect(answer.body.code).toBe('UNAUTHORIZED');
    }
  });

  it('refuses machine tokens with 403 on every profile route', async () => {
    for (const [method, path] of USER_ROUTES) {
      // The default caller of `t.call` is a deployment machine token with every admin scope.
      const answer = await t.call(method, path, {});
      expect([method, path, answer.status]).toEqual([method, path, 403]);
      expect(answer.body.code).toBe('FORBIDDEN');
    }
  });

  it('refuses cookie writes without an allowlisted Origin (403) and changes nothing', async () => {
    const cookie = cookieOf(await signIn());
    const before = await t.call('GET', '/v1/profile/me', { token: null, headers: { cookie } });
    expect(before.status).toBe(200);
    const refused: Record<string, string>[] = [
      { cookie },
      { cookie, origin: 'https://evil.example.test' },
    ];
    for (const headers of refused) {
      const patch = await t.call('PATCH', '/v1/profile/me', {
        token: null,
        headers,
        body: { nickname: 'Hacked' },
      });
      expect(patch.status).toBe(403);
      expect(patch.body.code).toBe('FORBIDDEN');
      const upload = await requestUpload({ token: null, headers }, 'image/png', 100);
      expect(upload.status).toBe(403);
      const put = await putImage(USER_ROUTES[5]?.[1] as string, png(), {
        contentType: 'image/png',
        headers,
      });
      expect(put.status).toBe(403);
      expect(put.body.code).toBe('FORBIDDEN');
    }
    const after = await t.call('GET', '/v1/profile/me', { token: null, headers: { cookie } });
    expect(after.body).toEqual(before.body);
  });
});

describe('GET /v1/users/me (getMyUserDetails)', () => {
  it('answers identity, localUser and profile for a cookie session', async () => {
    const cookie = cookieOf(await signIn());
    const answer = await t.call('GET', '/v1/users/me', { token: null, headers: { cookie } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const account = await t.call('GET', '/v1/account/me', { token: null, headers: { cookie } });
    const row = (await t.db
      .knex('authflow.users')
      .where({ issuer: t.provider.issuer, subject: 'user-1' })
      .first()) as { id: string; created_at: Date; last_login_at: Date };
    expect(answer.body).toEqual({
      identity: account.body,
      localUser: {
        id: row.id,
        environmentKey: 'PROD',
        deploymentEnvironment: true,
        status: 'ACTIVE',
        roles: [],
        createdAt: new Date(row.created_at).toISOString(),
        lastLoginAt: new Date(row.last_login_at).toISOString(),
      },
      profile: {
        userId: row.id,
        ...emptyValues,
        // Spec 2.5 JIT: the OIDC picture and name, copied at login.
        avatarUrl: PICTURE,
        metadata: { displayName: 'User One' },
        updatedAt: expect.any(String),
      },
    });
  });

  it('answers for a Bearer user token, with the profile of GET /v1/profile/me', async () => {
    const answer = await t.call('GET', '/v1/users/me', as('dan'));
    expect(answer.status).toBe(200);
    const identity = answer.body.identity as Record<string, unknown>;
    expect(identity).toMatchObject({ subject: 'dan', email: 'dan@example.test' });
    expect(answer.body.localUser).toMatchObject({ id: identity.id, roles: [], status: 'ACTIVE' });
    expect(answer.body.profile).toEqual((await t.call('GET', '/v1/profile/me', as('dan'))).body);
  });
});

describe('GET /v1/profile/me (getMyProfile)', () => {
  it('answers every canonical key as null before the profile exists', async () => {
    const answer = await t.call('GET', '/v1/profile/me', as('eve'));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.body).toEqual({
      userId: expect.stringMatching(UUID),
      ...emptyValues,
      avatarUrl: null,
      metadata: {},
      updatedAt: null,
    });
  });
});

describe('PATCH /v1/profile/me (patchMyProfile)', () => {
  const complete = {
    firstName: 'Ann',
    middleName: 'Marie',
    lastName: 'Lee',
    nickname: 'annie',
    phoneNumber: '+4915112345678',
    dateOfBirth: '1990-02-28',
    gender: 'female',
    bio: 'Line one.\nLine two.',
    nationalityCountryCode: 'DE',
    secondaryNationalityCountryCode: 'FR',
    residenceCountryCode: 'PT',
    preferredLocale: 'pt-BR',
    timezone: 'Europe/Lisbon',
  };

  it('saves every canonical key, answers the profile and keeps what it was not sent', async () => {
    const answer = await t.call('PATCH', '/v1/profile/me', { ...as('ann'), body: complete });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      userId: expect.stringMatching(UUID),
      ...complete,
      avatarUrl: null,
      metadata: {},
      updatedAt: expect.any(String),
    });
    expect((await t.call('GET', '/v1/profile/me', as('ann'))).body).toEqual(answer.body);

    const partial = await t.call('PATCH', '/v1/profile/me', {
      ...as('ann'),
      body: { nickname: 'A.', middleName: null, bio: '' },
    });
    expect(partial.status).toBe(200);
    expect(partial.body).toMatchObject({
      ...complete,
      nickname: 'A.',
      middleName: null,
      bio: null,
    });
    expect(Date.parse(partial.body.updatedAt as string)).toBeGreaterThanOrEqual(
      Date.parse(answer.body.updatedAt as string),
    );
  });

  it('accepts a cookie write from an allowlisted Origin', async () => {
    const cookie = cookieOf(await signIn());
    const answer = await t.call('PATCH', '/v1/profile/me', {
      token: null,
      headers: { cookie, origin: ALLOWED_ORIGIN },
      body: { lastName: 'One' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ lastName: 'One', metadata: { displayName: 'User One' } });
  });

  it.each([
    ['firstName', '201 characters', 'x'.repeat(201), /at most 200 characters/],
    ['middleName', '201 characters', 'x'.repeat(201), /at most 200 characters/],
    ['lastName', '201 characters', 'x'.repeat(201), /at most 200 characters/],
    ['nickname', '201 characters', 'x'.repeat(201), /at most 200 characters/],
    ['phoneNumber', 'without +', '0151 1234567', /E\.164/],
    ['phoneNumber', 'starting with 0', '+0123456789', /E\.164/],
    ['dateOfBirth', 'not a real day', '1990-02-30', /calendar date/],
    ['dateOfBirth', 'not YYYY-MM-DD', '28.02.1990', /calendar date/],
    ['gender', '101 characters', 'x'.repeat(101), /at most 100 characters/],
    ['bio', '2001 characters', 'x'.repeat(2001), /at most 2000 characters/],
    ['nationalityCountryCode', 'lower case', 'de', /ISO 3166-1 alpha-2/],
    ['secondaryNationalityCountryCode', 'alpha-3', 'DEU', /ISO 3166-1 alpha-2/],
    ['residenceCountryCode', 'a digit', 'P1', /ISO 3166-1 alpha-2/],
    ['preferredLocale', 'not BCP 47', 'pt_BR', /BCP 47/],
    ['timezone', 'unknown zone', 'Mars/Olympus_Mons', /time zone/],
    ['firstName', 'a number', 42, /expected string/],
    ['nickname', 'a boolean', true, /expected string/],
    ['lastName', 'an array', ['Lee'], /expected string/],
  ])('refuses %s (%s) with 400 naming the key', async (key, _label, value, message) => {
    const answer = await t.call('PATCH', '/v1/profile/me', {
      ...as('ben'),
      body: { [key]: value },
    });
    const issues = issuesOf(answer);
    expect(issues).toEqual([{ location: 'body', path: key, message: expect.any(String) }]);
    expect(issues[0]?.message).toMatch(message);
  });

  it('reports every issue of a request at once, unknown keys by name, and saves nothing', async () => {
    const before = (await t.call('GET', '/v1/profile/me', as('ann'))).body;
    const badValues = await t.call('PATCH', '/v1/profile/me', {
      ...as('ann'),
      body: { firstName: 'Valid', dateOfBirth: '2001-13-01', residenceCountryCode: 'pt' },
    });
    expect(issuesOf(badValues).map((issue) => issue.path)).toEqual([
      'dateOfBirth',
      'residenceCountryCode',
    ]);
    // Shape errors (unknown keys, JSON types) are found before the values are checked.
    const badShape = await t.call('PATCH', '/v1/profile/me', {
      ...as('ann'),
      body: { firstName: 'Valid', email: 'ann@example.test', nickName: 'typo', bio: 5 },
    });
    expect(issuesOf(badShape)).toEqual([
      { location: 'body', path: 'bio', message: expect.stringMatching(/expected string/) },
      { location: 'body', path: 'email', message: 'is not a profile field' },
      { location: 'body', path: 'nickName', message: 'is not a profile field' },
    ]);
    expect((await t.call('GET', '/v1/profile/me', as('ann'))).body).toEqual(before);
  });

  it('refuses a body that is not a JSON object', async () => {
    for (const rawBody of ['[]', '"text"', 'null']) {
      const answer = await t.call('PATCH', '/v1/profile/me', {
        ...as('ben'),
        rawBody,
        headers: { 'content-type': 'application/json' },
      });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('VALIDATION_ERROR');
    }
  });

  it('merges metadata at the top level: members replace, null removes, null metadata clears', async () => {
    const first = await t.call('PATCH', '/v1/profile/me', {
      ...as('cat'),
      body: { metadata: { displayName: 'Cat', theme: 'dark', pins: [1, 2] } },
    });
    expect(first.status).toBe(200);
    expect(first.body.metadata).toEqual({ displayName: 'Cat', theme: 'dark', pins: [1, 2] });
    const second = await t.call('PATCH', '/v1/profile/me', {
      ...as('cat'),
      body: { metadata: { theme: null, pins: [3], nested: { a: true } } },
    });
    expect(second.body.metadata).toEqual({
      displayName: 'Cat',
      pins: [3],
      nested: { a: true },
    });
    const blankName = await t.call('PATCH', '/v1/profile/me', {
      ...as('cat'),
      body: { metadata: { displayName: '  ' } },
    });
    expect(blankName.body.metadata).toEqual({ pins: [3], nested: { a: true } });
    const cleared = await t.call('PATCH', '/v1/profile/me', {
      ...as('cat'),
      body: { metadata: null },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.metadata).toEqual({});
  });

  it('refuses a displayName with HTML or over 200 characters, metadata over 4 KiB and non-objects', async () => {
    const cases: [unknown, string, RegExp][] = [
      [{ displayName: '<b>Cat</b>' }, 'metadata.displayName', /HTML/],
      [{ displayName: 'x'.repeat(201) }, 'metadata.displayName', /at most 200/],
      [{ displayName: 7 }, 'metadata.displayName', /string/],
      [{ blob: 'x'.repeat(4096) }, 'metadata', /4096 bytes/],
      [['a'], 'metadata', /expected record/],
      ['text', 'metadata', /expected record/],
    ];
    for (const [metadata, path, message] of cases) {
      const issues = issuesOf(
        await t.call('PATCH', '/v1/profile/me', { ...as('cat'), body: { metadata } }),
      );
      expect(issues).toEqual([{ location: 'body', path, message: expect.stringMatching(message) }]);
    }
    // The 4 KiB limit is on the merged object: two halves that fit alone do not fit together.
    const half = 'y'.repeat(2100);
    expect(
      (await t.call('PATCH', '/v1/profile/me', { ...as('cat'), body: { metadata: { a: half } } }))
        .status,
    ).toBe(200);
    const merged = await t.call('PATCH', '/v1/profile/me', {
      ...as('cat'),
      body: { metadata: { b: half } },
    });
    expect(issuesOf(merged)).toEqual([
      { location: 'body', path: 'metadata', message: expect.stringMatching(/4096 bytes/) },
    ]);
    expect((await t.call('GET', '/v1/profile/me', as('cat'))).body.metadata).toEqual({ a: half });
  });

  it('takes avatarUrl only as null', async () => {
    const issues = issuesOf(
      await t.call('PATCH', '/v1/profile/me', {
        ...as('ben'),
        body: { avatarUrl: 'https://images.example.test/x.png' },
      }),
    );
    expect(issues).toEqual([
      { location: 'body', path: 'avatarUrl', message: expect.stringMatching(/null/) },
    ]);
  });
});

describe('PATCH /v1/profile/me with global field definitions (spec 2.10, 4.13)', () => {
  async function defineGlobal(body: Record<string, unknown>) {
    const created = await t.call('POST', GLOBAL, { body });
    expect(created.status).toBe(201);
  }

  afterAll(async () => {
    for (const key of ['gender', 'firstName', 'preferredLocale', 'nickname']) {
      await t.call('DELETE', `${GLOBAL}/${key}`);
    }
  });

  it('applies an active definition’s options and validation on top of the key’s own rule', async () => {
    await defineGlobal({
      profileFieldKey: 'gender',
      label: 'Gender',
      fieldType: 'SELECT',
      options: [
        { value: 'female', label: 'Female' },
        { value: 'male', label: 'Male' },
        { value: 'diverse', label: 'Diverse' },
      ],
    });
    await defineGlobal({
      profileFieldKey: 'firstName',
      label: 'First name',
      fieldType: 'TEXT',
      validation: { minLength: 2, pattern: '^[A-Za-z ]+$' },
    });
    const refused: [string, string, RegExp][] = [
      ['gender', 'woman', /option values/],
      ['firstName', 'A', /at least 2 characters/],
      ['firstName', 'Ann1', /required format/],
      // The key's own rule still applies: the definition's type is not the only limit.
      ['firstName', 'A'.repeat(201), /at most 200 characters/],
    ];
    for (const [key, value, message] of refused) {
      const issues = issuesOf(
        await t.call('PATCH', '/v1/profile/me', { ...as('ben'), body: { [key]: value } }),
      );
      expect(issues).toEqual([
        { location: 'body', path: key, message: expect.stringMatching(message) },
      ]);
    }
    const saved = await t.call('PATCH', '/v1/profile/me', {
      ...as('ben'),
      body: { gender: 'diverse', firstName: 'Ben Bo', lastName: 'Any 1' },
    });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ gender: 'diverse', firstName: 'Ben Bo', lastName: 'Any 1' });
  });

  it('lets a SELECT definition replace the key’s own format, and stops applying once archived', async () => {
    await defineGlobal({
      profileFieldKey: 'preferredLocale',
      label: 'Language',
      fieldType: 'SELECT',
      options: [{ value: 'en_GB', label: 'English (UK)' }],
    });
    const listed = await t.call('PATCH', '/v1/profile/me', {
      ...as('ben'),
      body: { preferredLocale: 'en_GB' },
    });
    expect(listed.status).toBe(200);
    expect(
      issuesOf(
        await t.call('PATCH', '/v1/profile/me', {
          ...as('ben'),
          body: { preferredLocale: 'en-GB' },
        }),
      )[0]?.message,
    ).toMatch(/option values/);

    expect((await t.call('DELETE', `${GLOBAL}/gender`)).status).toBe(200);
    const free = await t.call('PATCH', '/v1/profile/me', {
      ...as('ben'),
      body: { gender: 'woman' },
    });
    expect(free.status).toBe(200);
    expect(free.body.gender).toBe('woman');
  });
});

describe('GET /v1/profile/me/details (getMyLocalProfileDetails)', () => {
  it('answers the profile, which keys are filled, and the global onboarding status', async () => {
    const patched = await t.call('PATCH', '/v1/profile/me', {
      ...as('dan'),
      body: { firstName: 'Dan', dateOfBirth: '1980-01-01' },
    });
    expect(patched.status).toBe(200);
    const answer = await t.call('GET', '/v1/profile/me/details', as('dan'));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      profile: patched.body,
      completeness: {
        filled: ['firstName', 'dateOfBirth'],
        empty: canonicalProfileKeys.filter((key) => key !== 'firstName' && key !== 'dateOfBirth'),
      },
      globalOnboarding: { status: 'COMPLETE', missingFields: [] },
    });

    const required = await t.call('POST', GLOBAL, {
      body: { profileFieldKey: 'nickname', label: 'Nickname', fieldType: 'TEXT', required: true },
    });
    expect(required.status).toBe(201);
    try {
      const missing = await t.call('GET', '/v1/profile/me/details', as('dan'));
      expect(missing.body.globalOnboarding).toEqual({
        status: 'INCOMPLETE',
        missingFields: ['nickname'],
      });
    } finally {
      await t.call('DELETE', `${GLOBAL}/nickname`);
    }
  });
});

describe('avatar upload (spec 4.8 createAvatarUploadRequest, uploadMyAvatar, getAvatar)', () => {
  it('reserves an upload, stores the image and serves it publicly with safe headers', async () => {
    const image = png(500);
    const before = Date.now();
    const reserved = await requestUpload(as('ann'), 'image/png', image.length);
    expect(reserved.status).toBe(201);
    expect(reserved.headers.get('cache-control')).toBe('no-store');
    const uploadId = reserved.body.uploadId as string;
    expect(reserved.body).toEqual({
      uploadId: expect.stringMatching(UUID),
      uploadUrl: `${BASE_URL}/v1/profile/me/avatar/uploads/${uploadId}`,
      method: 'PUT',
      headers: { 'content-type': 'image/png' },
      expiresAt: expect.any(String),
      maxBytes: 1048576,
    });
    const expiresIn = Date.parse(reserved.body.expiresAt as string) - before;
    expect(expiresIn).toBeGreaterThan(9 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(10 * 60_000 + 1000);

    const stored = await putImage(pathOf(reserved.body.uploadUrl as string), image, {
      ...as('ann'),
      contentType: 'image/png',
    });
    expect(stored.status).toBe(200);
    const avatarUrl = stored.body.avatarUrl as string;
    expect(avatarUrl).toMatch(new RegExp(`^${BASE_URL}/v1/avatars/[0-9a-f-]{36}$`));
    expect(stored.body).toMatchObject({ firstName: 'Ann' });
    expect((await t.call('GET', '/v1/profile/me', as('ann'))).body.avatarUrl).toBe(avatarUrl);

    const { response, data } = await getAvatar(pathOf(avatarUrl));
    expect(response.status).toBe(200);
    expect(data.equals(image)).toBe(true);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(response.headers.get('content-length')).toBe(String(image.length));
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-security-policy')).toBe("default-src 'none'");
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');

    // Single use: the same upload URL is 404 afterwards.
    const again = await putImage(pathOf(reserved.body.uploadUrl as string), image, {
      ...as('ann'),
      contentType: 'image/png',
    });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('NOT_FOUND');
  });

  it('replaces the avatar and deletes the previous image; sniffs JPEG and WebP', async () => {
    const first = await uploadAvatar('cat', 'image/jpeg', jpeg(300));
    const firstServed = await getAvatar(pathOf(first));
    expect(firstServed.response.headers.get('content-type')).toBe('image/jpeg');
    const image = webp(400);
    const second = await uploadAvatar('cat', 'image/webp', image);
    expect(second).not.toBe(first);
    expect((await getAvatar(pathOf(first))).response.status).toBe(404);
    const served = await getAvatar(pathOf(second));
    expect(served.response.headers.get('content-type')).toBe('image/webp');
    expect(served.data.equals(image)).toBe(true);
    const rows = await t.db
      .knex('onboarding.avatars')
      .whereIn('id', [
        pathOf(first).split('/').pop() as string,
        pathOf(second).split('/').pop() as string,
      ]);
    expect(rows).toHaveLength(1);
  });

  it('answers 404 for another user’s upload, which stays usable by its owner', async () => {
    const image = png();
    const reserved = await requestUpload(as('ben'), 'image/png', image.length);
    const path = pathOf(reserved.body.uploadUrl as string);
    const stolen = await putImage(path, image, { ...as('dan'), contentType: 'image/png' });
    expect(stolen.status).toBe(404);
    expect(stolen.body.code).toBe('NOT_FOUND');
    expect((await t.call('GET', '/v1/profile/me', as('dan'))).body.avatarUrl).toBeNull();
    const own = await putImage(path, image, { ...as('ben'), contentType: 'image/png' });
    expect(own.status).toBe(200);
  });

  it('answers 404 for an expired upload and for an unknown or malformed upload id', async () => {
    const image = png();
    const reserved = await requestUpload(as('ben'), 'image/png', image.length);
    await t.db
      .knex('onboarding.avatar_uploads')
      .where({ id: reserved.body.uploadId as string })
      .update({ expires_at: new Date(Date.now() - 1000) });
    for (const path of [
      pathOf(reserved.body.uploadUrl as string),
      '/v1/profile/me/avatar/uploads/3f0c7a5e-2b1d-4c8e-9a6f-5d4e3c2b1a09',
      '/v1/profile/me/avatar/uploads/not-a-uuid',
    ]) {
      const answer = await putImage(path, image, { ...as('ben'), contentType: 'image/png' });
      expect([path, answer.status, answer.body.code]).toEqual([path, 404, 'NOT_FOUND']);
    }
  });

  it('refuses bytes that are not the declared type (400), and the upload stays usable', async () => {
    const image = png(256);
    const reserved = await requestUpload(as('eve'), 'image/png', image.length);
    const path = pathOf(reserved.body.uploadUrl as string);

    const badMagic = await putImage(path, gif(256), { ...as('eve'), contentType: 'image/png' });
    expect(issuesOf(badMagic)).toEqual([
      { location: 'body', path: 'body', message: expect.stringMatching(/image\/png image/) },
    ]);
    const otherType = await putImage(path, jpeg(256), { ...as('eve'), contentType: 'image/jpeg' });
    expect(issuesOf(otherType)).toEqual([
      { location: 'header', path: 'content-type', message: expect.stringMatching(/image\/png/) },
    ]);
    const notImage = await putImage(path, image, { ...as('eve'), contentType: 'text/plain' });
    expect(notImage.status).toBe(415);
    expect(notImage.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const short = await putImage(path, image.subarray(0, 200), {
      ...as('eve'),
      contentType: 'image/png',
    });
    expect(issuesOf(short)[0]?.message).toMatch(/declared 256 bytes/);
    const long = await putImage(path, Buffer.concat([image, Buffer.alloc(10)]), {
      ...as('eve'),
      contentType: 'image/png',
    });
    expect(long.status).toBe(413);
    expect(long.body.code).toBe('PAYLOAD_TOO_LARGE');
    expect((await t.call('GET', '/v1/profile/me', as('eve'))).body.avatarUrl).toBeNull();

    const stored = await putImage(path, image, { ...as('eve'), contentType: 'image/png' });
    expect(stored.status).toBe(200);
  });

  it('answers 413 for an image over 1 MiB', async () => {
    const reserved = await requestUpload(as('eve'), 'image/png', 1048576);
    expect(reserved.status).toBe(201);
    const answer = await putImage(pathOf(reserved.body.uploadUrl as string), png(1048577), {
      ...as('eve'),
      contentType: 'image/png',
    });
    expect(answer.status).toBe(413);
    expect(answer.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('validates the upload request', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ contentType: 'image/gif', contentLength: 10 }, 'contentType'],
      [{ contentType: 'image/png', contentLength: 0 }, 'contentLength'],
      [{ contentType: 'image/png', contentLength: 1048577 }, 'contentLength'],
      [{ contentType: 'image/png', contentLength: 1.5 }, 'contentLength'],
      [{ contentType: 'image/png' }, 'contentLength'],
    ];
    for (const [body, path] of cases) {
      const answer = await t.call('POST', '/v1/profile/me/avatar/upload-request', {
        ...as('eve'),
        body,
      });
      expect(issuesOf(answer).map((issue) => issue.path)).toEqual([path]);
    }
    const unknown = await t.call('POST', '/v1/profile/me/avatar/upload-request', {
      ...as('eve'),
      body: { contentType: 'image/png', contentLength: 10, fileName: 'me.png' },
    });
    expect(unknown.status).toBe(400);
  });

  it('works with the cookie and an allowlisted Origin', async () => {
    const cookie = cookieOf(await signIn());
    const headers = { cookie, origin: ALLOWED_ORIGIN };
    const image = jpeg(1000);
    const reserved = await requestUpload({ token: null, headers }, 'image/jpeg', image.length);
    expect(reserved.status).toBe(201);
    const stored = await putImage(pathOf(reserved.body.uploadUrl as string), image, {
      contentType: 'image/jpeg',
      headers,
    });
    expect(stored.status).toBe(200);
    // The uploaded image replaces the OIDC picture.
    expect(stored.body.avatarUrl).not.toBe(PICTURE);
    expect((await getAvatar(pathOf(stored.body.avatarUrl as string))).data.equals(image)).toBe(
      true,
    );
  });

  it('answers 404 with the error body for an unknown or malformed avatar id', async () => {
    for (const path of ['/v1/avatars/3f0c7a5e-2b1d-4c8e-9a6f-5d4e3c2b1a09', '/v1/avatars/x']) {
      const answer = await t.call('GET', path, { token: null });
      expect(answer.status).toBe(404);
      expect(answer.body.code).toBe('NOT_FOUND');
      expect(answer.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('removes the avatar and its stored image with PATCH avatarUrl: null', async () => {
    const avatarUrl = await uploadAvatar('dan', 'image/png', png());
    const removed = await t.call('PATCH', '/v1/profile/me', {
      ...as('dan'),
      body: { avatarUrl: null },
    });
    expect(removed.status).toBe(200);
    expect(removed.body.avatarUrl).toBeNull();
    expect((await getAvatar(pathOf(avatarUrl))).response.status).toBe(404);
  });
});
