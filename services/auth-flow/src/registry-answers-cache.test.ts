import { describe, expect, it } from '@jest/globals';
import type { Client } from '@connectrpc/connect';
import type { RegistryService } from '@gateway/contracts';
import { createLocalChangeFeed } from '@gateway/db';
import { exercisablePermissions } from './platform-session-policy.js';
import { cachingRegistryAnswers } from './registry-answers-cache.js';

type RegistryClient = Client<typeof RegistryService>;

/** A registry whose platform SHOP is active or not, counting the session policy reads. */
function countingRegistry() {
  const state = { active: true, reads: 0 };
  const registry = {
    getPlatformSessionPolicy() {
      state.reads += 1;
      return Promise.resolve({
        sessionsAllowed: state.active,
        sessionsNotBeforeMs: 0n,
        adminConsole: false,
      });
    },
  } as unknown as RegistryClient;
  return { state, registry };
}

const session = { platformKey: 'SHOP', createdAt: Date.now(), permissions: ['platforms:admin'] };
const consoleOnly = { adminPowerConsoleOnly: true };

describe('the session policy in the registry answers cache', () => {
  it('is read once, then served from the cache until a change is announced', async () => {
    const { state, registry } = countingRegistry();
    const feed = createLocalChangeFeed();
    const cached = cachingRegistryAnswers(registry, feed);
    expect(await exercisablePermissions(cached, session, consoleOnly)).toEqual([]);
    expect(await exercisablePermissions(cached, session, consoleOnly)).toEqual([]);
    expect(state.reads).toBe(1);

    state.active = false;
    await feed.announce();
    expect(await exercisablePermissions(cached, session, consoleOnly)).toBeUndefined();
    expect(state.reads).toBe(2);
  });

  it('is read at every use while the feed is disconnected', async () => {
    const { state, registry } = countingRegistry();
    const feed = { ...createLocalChangeFeed(), connected: false };
    const cached = cachingRegistryAnswers(registry, feed);
    await exercisablePermissions(cached, session, consoleOnly);
    await exercisablePermissions(cached, session, consoleOnly);
    expect(state.reads).toBe(2);
  });
});
