import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';

// GET /v1/audit-records filtered by actor, platform and time span, over real HTTP against the
// gateway on PostgreSQL: an admin user (Bearer token, so its records carry its e-mail) and a
// machine client each register a platform, and every filter finds exactly the records it
// names, alone and together, with the paging and total of the filtered list.

type AuditBody = {
  kind: string;
  targetType: string;
  targetKey: string;
  createdAt: string;
  actor: { kind: string; subject: string | null; clientId: string | null; email: string | null };
};

let t: GatewayUnderTest;
let userToken: string;
let machineClientId: string;
/** An instant after CAFE's records and before SHOP's. */
let between: string;

const pair = (host: string) => ({
  label: 'web',
  returnUrl: `http://${host}:3000/`,
  callbackUrl: `http://${host}:3000/auth/callback`,
  isDefault: true,
});

async function records(query: string): Promise<{ items: AuditBody[]; total: number }> {
  const answer = await t.call('GET', `/v1/audit-records?pageSize=100&${query}`);
  expect(answer.status).toBe(200);
  return answer.body as unknown as { items: AuditBody[]; total: number };
}

const summary = (items: AuditBody[]) => items.map((item) => `${item.kind} ${item.targetKey}`);

beforeAll(async () => {
  t = await startGatewayUnderTest(
    {},
    { accounts: [{ accountId: 'dana', email: 'Dana.Admin@example.test', emailVerified: true }] },
  );
  userToken = (await t.provider.userTokens({ accountId: 'dana' })).accessToken;
  // The token provisions Dana (403: no role yet); the machine client grants the role.
  expect((await t.call('GET', '/v1/admin/users', { token: userToken })).status).toBe(403);
  const users = await t.call('GET', '/v1/admin/users?search=dana');
  const danaId = String(users.body.items?.[0]?.id);
  const granted = await t.call('PUT', `/v1/admin/users/${danaId}/roles/platform_admin`);
  expect(granted.status).toBe(200);

  const cafe = await t.call('POST', '/v1/platforms', {
    token: userToken,
    body: { platformKey: 'CAFE', displayName: 'Cafe', redirectPairs: [pair('cafe.localhost')] },
  });
  expect(cafe.status).toBe(201);
  const cafeRecords = await records('targetKey=CAFE');
  between = new Date(
    Math.max(...cafeRecords.items.map((item) => Date.parse(item.createdAt))) + 1,
  ).toISOString();
  // Records take their time from this process's clock: SHOP's come strictly after `between`.
  while (Date.now() <= Date.parse(between)) await new Promise((resolve) => setImmediate(resolve));
  const shop = await t.call('POST', '/v1/platforms', {
    body: { platformKey: 'SHOP', displayName: 'Shop', redirectPairs: [pair('shop.localhost')] },
  });
  expect(shop.status).toBe(201);
  const created = await records('kind=platform.created&targetKey=SHOP');
  machineClientId = String(created.items[0]?.actor.clientId);
});

afterAll(async () => {
  await t?.close();
});

describe('GET /v1/audit-records filters', () => {
  it('by actor: the e-mail in any case, the subject or the client id, as the records store them', async () => {
    const byEmail = await records('actor=dana.admin%40EXAMPLE.test');
    expect(summary(byEmail.items).sort()).toEqual([
      'platform.created CAFE',
      'platform.credential_created CAFE',
    ]);
    expect(byEmail.total).toBe(2);
    expect(byEmail.items.every((item) => item.actor.email === 'Dana.Admin@example.test')).toBe(
      true,
    );
    expect(summary((await records('actor=dana')).items).sort()).toEqual(
      summary(byEmail.items).sort(),
    );
    const byClient = await records(`actor=${encodeURIComponent(machineClientId)}`);
    expect(summary(byClient.items)).toEqual(
      expect.arrayContaining([
        'platform.created SHOP',
        'platform.credential_created SHOP',
        'user_role.granted Dana.Admin@example.test',
      ]),
    );
    expect(byClient.items.some((item) => item.targetKey === 'CAFE')).toBe(false);
    expect((await records('actor=nobody%40example.test')).total).toBe(0);
  });

  it('by platform: only records whose target is that platform', async () => {
    const cafe = await records('platform=CAFE');
    expect(cafe.items.length).toBeGreaterThan(0);
    expect(cafe.items.every((item) => item.targetType === 'platform')).toBe(true);
    expect(cafe.items.every((item) => item.targetKey === 'CAFE')).toBe(true);
    expect(
      (await records(`platform=CAFE&actor=${encodeURIComponent(machineClientId)}`)).total,
    ).toBe(0);
    expect((await records('platform=NONE')).total).toBe(0);
  });

  it('by time span: from and to are inclusive ISO 8601 instants', async () => {
    const after = await records(`from=${encodeURIComponent(between)}`);
    expect(summary(after.items)).toEqual(
      expect.arrayContaining(['platform.created SHOP', 'platform.credential_created SHOP']),
    );
    expect(after.items.some((item) => item.targetKey === 'CAFE')).toBe(false);
    const before = await records(`to=${encodeURIComponent(between)}&platform=CAFE`);
    expect(before.total).toBe(2);
    const offset = between.replace('Z', '+00:00');
    expect((await records(`from=${encodeURIComponent(offset)}`)).total).toBe(after.total);
    const span = await records(
      `from=${encodeURIComponent(between)}&to=${encodeURIComponent(between)}`,
    );
    expect(span.total).toBe(0);
  });

  it('keeps paging: the total counts the filtered records, a page holds pageSize of them', async () => {
    const first = await t.call('GET', '/v1/audit-records?platform=SHOP&pageSize=1&page=1');
    const second = await t.call('GET', '/v1/audit-records?platform=SHOP&pageSize=1&page=2');
    expect(first.body).toMatchObject({ total: 2, page: 1, pageSize: 1 });
    expect(second.body).toMatchObject({ total: 2, page: 2, pageSize: 1 });
    const kinds = [...(first.body.items ?? []), ...(second.body.items ?? [])].map(
      (item) => item.kind,
    );
    expect(kinds.sort()).toEqual(['platform.created', 'platform.credential_created']);
  });

  it.each([
    ['from=yesterday', 'from'],
    ['to=2026-11-27T10%3A00%3A00', 'to'],
    ['from=2026-11-27T10%3A00%3A00Z&to=2026-11-26T10%3A00%3A00Z', 'to'],
    ['platform=shop', 'platform'],
    ['actor=', 'actor'],
  ])('refuses %s with the 400 VALIDATION_ERROR body naming %s', async (query, path) => {
    const answer = await t.call('GET', `/v1/audit-records?${query}`);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.any(String),
      details: { issues: [expect.objectContaining({ location: 'query', path })] },
    });
  });
});
