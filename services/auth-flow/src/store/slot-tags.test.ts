import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import {
  handoffKeyOf,
  hashCredential,
  newHandoffCode,
  newState,
  slotTagOf,
  transactionKeyOf,
} from './slot-tags.js';
import { fakeHash } from './testing/fixtures.js';

describe('credentials that name their keys (slot-tags.ts)', () => {
  it("a handoff code sits in its session's slot and names its session, within 200 characters (spec 8)", () => {
    const sessionTokenHash = `0a1b2c3d.${fakeHash()}`;
    const code = newHandoffCode(sessionTokenHash, 'ffffffff');
    expect(code).toMatch(/^handoff_0a1b2c3d\.[A-Za-z0-9_-]{43}\.0a1b2c3d\./);
    expect(code.length).toBeLessThanOrEqual(200);
    expect(handoffKeyOf(code)).toEqual({ codeHash: hashCredential(code), sessionTokenHash });
    expect(hashCredential(code).startsWith('0a1b2c3d.')).toBe(true);
  });

  it('a code for a session from before tags takes the fallback tag and names the bare hash', () => {
    const sessionTokenHash = fakeHash();
    const code = newHandoffCode(sessionTokenHash, 'ffffffff');
    expect(code.startsWith('handoff_ffffffff.')).toBe(true);
    expect(handoffKeyOf(code)).toEqual({ codeHash: hashCredential(code), sessionTokenHash });
  });

  it("names no session for a code without one or with another slot's", () => {
    for (const code of [
      `handoff_0a1b2c3d.${fakeHash()}`,
      `handoff_0a1b2c3d.${fakeHash()}.11111111.${fakeHash()}`,
      'handoff_x',
    ]) {
      expect(handoffKeyOf(code)).toEqual({ codeHash: hashCredential(code) });
    }
  });

  it("a state carries its transaction's tag and id; any other state names nothing", () => {
    const id = randomUUID();
    const state = newState(id);
    expect(state.startsWith(`${slotTagOf(id)}.`)).toBe(true);
    expect(transactionKeyOf(state)).toEqual({
      stateHash: hashCredential(state),
      transactionId: id,
    });
    const other = randomUUID();
    for (const forged of [
      `${slotTagOf(other)}.${fakeHash()}.${id}`,
      `${slotTagOf(id)}.${fakeHash()}`,
      `${slotTagOf(id)}.${fakeHash()}.not-a-uuid`,
      '',
    ]) {
      expect(transactionKeyOf(forged)).toBe(undefined);
    }
  });
});
