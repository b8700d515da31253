import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';

// The admin console's platform, registered by the edge at the first visit of /admin/sign-in
// (an anonymous GET that writes): two gateway instances on one PostgreSQL database, first
// visits at once on both, then an admin's changes that later visits must leave alone.

let t: GatewayUnderTest;
let other: Awaited<ReturnType<GatewayUnderTest['startAnother']>>;

beforeAll(async () => {
  t = await startGatewayUnderTest();
  other = await t.startAnother({});
});

afterAll(async () => {
  await other?.close();
  await t?.close();
});

/** A browser's visit of the console's sign-in: where it is sent, or the refusal. */
async function visitSignIn(gatewayUrl: string) {
  const response = await fetch(`${gatewayUrl}/admin/sign-in`, { redirect: 'manual' });
  const body = response.status === 302 ? '' : await response.text();
  return { status: response.status, location: response.headers.get('location'), body };
}

async function consoleRecords(kind: string) {
  const answer = await t.call('GET', `/v1/audit-records?targetKey=ADMIN_CONSOLE&kind=${kind}`);
  return answer.body as unknown as {
    total: number;
    items: { actor: { kind: string; subject: string | null; email: string | null } }[];
  };
}

describe('the admin console platform', () => {
  it('is registered once by concurrent first visits on two gateways, as a system action', async () => {
    const visits = await Promise.all(
      [t.gateway.url, other.url, t.gateway.url, other.url, t.gateway.url, other.url].map(
        visitSignIn,
      ),
    );
    for (const visit of visits) {
      expect(visit.status).toBe(302);
      const start = new URL(visit.location ?? '');
      expect(start.pathname).toBe('/v1/auth/start');
      expect(start.searchParams.get('platformKey')).toBe('ADMIN_CONSOLE');
    }
    const created = await consoleRecords('platform.created');
    expect(created.total).toBe(1);
    expect(created.items[0]?.actor).toMatchObject({ kind: 'system', subject: 'edge', email: null });
    expect((await consoleRecords('platform.credential_created')).total).toBe(1);
    const platform = await t.call('GET', '/v1/platforms/ADMIN_CONSOLE');
    expect(platform.body).toMatchObject({ adminConsole: true, status: 'active' });
    expect(platform.body.redirectPairs).toHaveLength(1);
    expect(platform.body.credentials).toHaveLength(1);
  });

  it("never changes the platform an admin edited or deactivated; the sign-in says why it can't start", async () => {
    const renamed = await t.call('PATCH', '/v1/platforms/ADMIN_CONSOLE', {
      body: { displayName: 'Our console' },
    });
    expect(renamed.status).toBe(200);
    expect((await t.call('DELETE', '/v1/platforms/ADMIN_CONSOLE')).status).toBe(200);
    const before = await t.call('GET', '/v1/platforms/ADMIN_CONSOLE');
    const records = (await t.call('GET', '/v1/audit-records?platform=ADMIN_CONSOLE')).body.total;

    const visits = await Promise.all([visitSignIn(t.gateway.url), visitSignIn(other.url)]);
    for (const visit of visits) {
      expect(visit.status).toBe(404);
      expect(visit.body).toContain('deactivated or archived');
    }
    expect((await t.call('GET', '/v1/platforms/ADMIN_CONSOLE')).body).toEqual(before.body);
    expect((await t.call('GET', '/v1/audit-records?platform=ADMIN_CONSOLE')).body.total).toBe(
      records,
    );
  });
});
