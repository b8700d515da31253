import { describe, expect, it } from '@jest/globals';
import { SearchableMemoryStore } from './searchable-memory-store.js';

describe('SearchableMemoryStore', () => {
  it('finds, consumes and destroys per model, and by session uid', async () => {
    const store = new SearchableMemoryStore();
    const sessions = store.adapterFor('Session');
    await sessions.upsert('s1', { uid: 'u1', accountId: 'alice' }, 60);
    expect(await sessions.find('s1')).toMatchObject({ accountId: 'alice' });
    expect(await sessions.findByUid('u1')).toMatchObject({ accountId: 'alice' });
    expect(await store.adapterFor('Grant').find('s1')).toBeUndefined();
    const codes = store.adapterFor('AuthorizationCode');
    await codes.upsert('c1', { grantId: 'g1', accountId: 'alice' }, 60);
    await codes.consume('c1');
    expect((await codes.find('c1'))?.consumed).toEqual(expect.any(Number));
    await sessions.destroy('s1');
    expect(await sessions.findByUid('u1')).toBeUndefined();
  });

  it('forgets expired entries', async () => {
    const store = new SearchableMemoryStore();
    const tokens = store.adapterFor('RefreshToken');
    await tokens.upsert('t1', { accountId: 'alice' }, 0);
    expect(await tokens.find('t1')).toBeUndefined();
  });

  it('revokes by grant within one model', async () => {
    const store = new SearchableMemoryStore();
    await store.adapterFor('RefreshToken').upsert('r1', { grantId: 'g1' }, 60);
    await store.adapterFor('AccessToken').upsert('a1', { grantId: 'g1' }, 60);
    await store.adapterFor('RefreshToken').revokeByGrantId('g1');
    expect(await store.adapterFor('RefreshToken').find('r1')).toBeUndefined();
    expect(await store.adapterFor('AccessToken').find('a1')).toBeDefined();
  });

  it("destroys everything of one account and of its grants, and nothing of another's", async () => {
    const store = new SearchableMemoryStore();
    await store.adapterFor('Session').upsert('s1', { uid: 'u1', accountId: 'alice' }, 60);
    await store.adapterFor('Grant').upsert('g1', { accountId: 'alice' }, 60);
    await store.adapterFor('RefreshToken').upsert('r1', { grantId: 'g1', accountId: 'alice' }, 60);
    // A token of Alice's grant that does not name her (stored by another path).
    await store.adapterFor('AccessToken').upsert('a1', { grantId: 'g1' }, 60);
    await store
      .adapterFor('Interaction')
      .upsert('i1', { session: { accountId: 'alice', uid: 'u1' } }, 60);
    await store.adapterFor('Session').upsert('s2', { uid: 'u2', accountId: 'bob' }, 60);
    await store.adapterFor('RefreshToken').upsert('r2', { grantId: 'g2', accountId: 'bob' }, 60);

    expect(store.revokeAccount('alice')).toBe(5);
    for (const [model, id] of [
      ['Session', 's1'],
      ['Grant', 'g1'],
      ['RefreshToken', 'r1'],
      ['AccessToken', 'a1'],
      ['Interaction', 'i1'],
    ] as const) {
      expect(await store.adapterFor(model).find(id)).toBeUndefined();
    }
    expect(await store.adapterFor('Session').findByUid('u1')).toBeUndefined();
    expect(await store.adapterFor('Session').find('s2')).toBeDefined();
    expect(await store.adapterFor('RefreshToken').find('r2')).toBeDefined();
  });

  it('keeps every live entry however many there are (the development LRU kept 1,000)', async () => {
    const codes = new SearchableMemoryStore().adapterFor('AuthorizationCode');
    for (let i = 0; i < 3000; i += 1) {
      await codes.upsert(`code-${i}`, { grantId: `grant-${i}` }, 60);
    }
    expect(await codes.find('code-0')).toMatchObject({ grantId: 'grant-0' });
    expect(await codes.find('code-2999')).toMatchObject({ grantId: 'grant-2999' });
  });

  it('forgets an entry once its lifetime has passed, and keeps one without a lifetime', async () => {
    let now = 1_000_000;
    const store = new SearchableMemoryStore(() => now);
    await store.adapterFor('AuthorizationCode').upsert('short', { grantId: 'g1' }, 60);
    await store.adapterFor('Client').upsert('forever', { client_id: 'forever' });
    now += 59_999;
    expect(await store.adapterFor('AuthorizationCode').find('short')).toBeDefined();
    now += 1;
    expect(await store.adapterFor('AuthorizationCode').find('short')).toBeUndefined();
    now += 86_400_000;
    expect(await store.adapterFor('Client').find('forever')).toBeDefined();
  });

  it('sweeps expired entries out of the account index, so revoking finds only live ones', async () => {
    let now = 1_000_000;
    const store = new SearchableMemoryStore(() => now);
    await store.adapterFor('Session').upsert('old', { uid: 'u-old', accountId: 'alice' }, 10);
    now += 61_000;
    // Any write after a minute sweeps; the expired session goes with its index entries.
    await store.adapterFor('Session').upsert('new', { uid: 'u-new', accountId: 'alice' }, 600);
    expect(store.revokeAccount('alice')).toBe(1);
  });

  it('stamps a consumed code with the time of the clock, in seconds', async () => {
    const store = new SearchableMemoryStore(() => 1_700_000_000_500);
    const codes = store.adapterFor('AuthorizationCode');
    await codes.upsert('c1', { grantId: 'g1' }, 60);
    await codes.consume('c1');
    expect((await codes.find('c1'))?.consumed).toBe(1_700_000_000);
  });

  it('finds a device code by its user code, until destroyed', async () => {
    const deviceCodes = new SearchableMemoryStore().adapterFor('DeviceCode');
    await deviceCodes.upsert('d1', { userCode: 'ABCD-EFGH' }, 600);
    expect(await deviceCodes.findByUserCode('ABCD-EFGH')).toBeDefined();
    await deviceCodes.destroy('d1');
    expect(await deviceCodes.findByUserCode('ABCD-EFGH')).toBeUndefined();
  });

  it('keeps stores apart: each provider has its own', async () => {
    await new SearchableMemoryStore().adapterFor('Session').upsert('s1', { uid: 'u1' }, 600);
    expect(await new SearchableMemoryStore().adapterFor('Session').find('s1')).toBeUndefined();
  });
});
