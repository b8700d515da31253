import { describe, expect, it } from '@jest/globals';
import type { ExchangeResult } from '../gateway-types.js';
import { createMemorySessionStore } from './session-store.js';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const result = { returnTo: 'http://localhost:3000/' } as ExchangeResult;

describe('the in-memory session store', () => {
  it('answers a session until its expiresAt, then forgets it', async () => {
    let now = T0;
    const store = createMemorySessionStore({ now: () => now });
    await store.set('id-1', result, new Date(T0 + 1_000));
    now = T0 + 999;
    expect(await store.get('id-1')).toBe(result);
    now = T0 + 1_000;
    expect(await store.get('id-1')).toBeUndefined();
  });

  it('deletes on request, and keeps live entries through a sweep', async () => {
    let now = T0;
    const store = createMemorySessionStore({ now: () => now, sweepAbove: 2 });
    await store.set('a', result, new Date(T0 + 10));
    await store.set('b', result, new Date(T0 + 10_000));
    await store.delete('b');
    expect(await store.get('b')).toBeUndefined();
    now = T0 + 20;
    await store.set('c', result, new Date(T0 + 10_000));
    expect(await store.get('c')).toBe(result);
  });
});
