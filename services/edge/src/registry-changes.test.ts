import { describe, expect, it } from '@jest/globals';
import type { Client } from '@connectrpc/connect';
import type { RegistryService } from '@gateway/contracts';
import { announcingRegistryChanges } from './registry-changes.js';

type RegistryClient = Client<typeof RegistryService>;

/**
 * A stand-in for the registry client (the calls' answers do not matter here, only whether
 * the wrapper announces): each method resolves, or rejects when its name says so.
 */
function standIn(): RegistryClient {
  const call = (name: string) => () =>
    name.startsWith('fail') ? Promise.reject(new Error(name)) : Promise.resolve({ name });
  return new Proxy({} as RegistryClient, { get: (_target, name) => call(String(name)) });
}

describe('announcingRegistryChanges', () => {
  it('announces after every change, once it has settled', async () => {
    let announced = 0;
    const client = announcingRegistryChanges(standIn(), () => (announced += 1));
    const pending = client.rotatePlatformCredential({ platformKey: 'SHOP', credentialId: 'c' });
    expect(announced).toBe(0);
    await pending;
    expect(announced).toBe(1);
    await client.deactivateIdentityEnvironment({ environmentKey: 'PARTNER' });
    await client.updatePlatform({ platformKey: 'SHOP' });
    expect(announced).toBe(3);
  });

  it('announces a change whose call failed too (it may have committed before a time-out)', async () => {
    let announced = 0;
    const client = announcingRegistryChanges(standIn(), () => (announced += 1));
    const failing = (client as unknown as Record<string, () => Promise<unknown>>).failingChange;
    await expect(failing?.()).rejects.toThrow('failingChange');
    expect(announced).toBe(1);
  });

  it('announces nothing for reads, the credential check and login preparation', async () => {
    let announced = 0;
    const client = announcingRegistryChanges(standIn(), () => (announced += 1));
    await client.getPlatform({ platformKey: 'SHOP' });
    await client.listPlatforms({});
    await client.verifyPlatformCredential({ clientId: 'a', clientSecret: 'b' });
    await client.prepareLogin({ platformKey: 'SHOP', returnTo: '/' });
    await client.getEnvironmentClient({ environmentKey: 'PROD' });
    await client.getCorsOrigins({});
    await client.appendAuditRecord({ kind: 'user_role.bootstrapped' });
    expect(announced).toBe(0);
  });
});
