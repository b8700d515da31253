import { describe, expect, it } from '@jest/globals';
import type { AdapterPayload } from 'oidc-provider';
import { createExpiringMemoryAdapter } from './expiring-memory-adapter.js';

describe('createExpiringMemoryAdapter', () => {
  it('keeps every live entry however many there are (the development LRU kept 1,000)', async () => {
    const codes = createExpiringMemoryAdapter()('AuthorizationCode');
    for (let i = 0; i < 3000; i += 1) {
      await codes.upsert(`code-${i}`, { grantId: `grant-${i}`, kind: 'AuthorizationCode' }, 60);
    }
    expect(await codes.find('code-0')).toMatchObject({ grantId: 'grant-0' });
    expect(await codes.find('code-2999')).toMatchObject({ grantId: 'grant-2999' });
  });

  it('forgets an entry once its lifetime has passed, and keeps one without a lifetime', async () => {
    let now = 1_000_000;
    const factory = createExpiringMemoryAdapter(() => now);
    const codes = factory('AuthorizationCode');
    const clients = factory('Client');
    await codes.upsert('short', { kind: 'AuthorizationCode' }, 60);
    await clients.upsert('forever', { kind: 'Client' });
    now += 59_999;
    expect(await codes.find('short')).toBeDefined();
    now += 1;
    expect(await codes.find('short')).toBeUndefined();
    now += 86_400_000;
    expect(await clients.find('forever')).toBeDefined();
  });

  it('revokes every token and code of a grant, and nothing of another grant', async () => {
    const factory = createExpiringMemoryAdapter();
    const codes = factory('AuthorizationCode');
    const accessTokens = factory('AccessToken');
    await codes.upsert('c1', { grantId: 'g1' }, 60);
    await accessTokens.upsert('a1', { grantId: 'g1' }, 600);
    await accessTokens.upsert('a2', { grantId: 'g2' }, 600);
    await accessTokens.revokeByGrantId('g1');
    expect(await codes.find('c1')).toBeUndefined();
    expect(await accessTokens.find('a1')).toBeUndefined();
    expect(await accessTokens.find('a2')).toMatchObject({ grantId: 'g2' });
  });

  it('marks a code consumed, so the provider refuses it a second time', async () => {
    const codes = createExpiringMemoryAdapter(() => 1_700_000_000_500)('AuthorizationCode');
    await codes.upsert('c1', { grantId: 'g1' }, 60);
    await codes.consume('c1');
    expect(((await codes.find('c1')) as AdapterPayload).consumed).toBe(1_700_000_000);
  });

  it('finds a session by its uid and a device code by its user code, until destroyed', async () => {
    const factory = createExpiringMemoryAdapter();
    const sessions = factory('Session');
    const deviceCodes = factory('DeviceCode');
    await sessions.upsert('s1', { uid: 'u1', accountId: 'alice' }, 600);
    await deviceCodes.upsert('d1', { userCode: 'ABCD-EFGH' }, 600);
    expect(await sessions.findByUid('u1')).toMatchObject({ accountId: 'alice' });
    expect(await deviceCodes.findByUserCode('ABCD-EFGH')).toBeDefined();
    await sessions.destroy('s1');
    await deviceCodes.destroy('d1');
    expect(await sessions.findByUid('u1')).toBeUndefined();
    expect(await deviceCodes.findByUserCode('ABCD-EFGH')).toBeUndefined();
  });

  it('keeps providers apart: each factory has its own storage', async () => {
    await createExpiringMemoryAdapter()('Session').upsert('s1', { uid: 'u1' }, 600);
    expect(await createExpiringMemoryAdapter()('Session').find('s1')).toBeUndefined();
  });
});
