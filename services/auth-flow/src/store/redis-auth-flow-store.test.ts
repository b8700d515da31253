// Redis-only properties of the store: the key layout, that Redis itself expires every key at
// the record's expiresAt, the key prefix, and the memory a session costs.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { createHash, randomUUID } from 'node:crypto';
import { connectRedis } from '@gateway/db';
import { createRedisAuthFlowStore } from './redis-auth-flow-store.js';
import {
  MINUTE,
  fakeCiphertext,
  fakeHash,
  hashIn,
  keyOf,
  newHandoff,
  newHandoffSnapshot,
  newSession,
  newSessionSnapshot,
  newTransaction,
  presenterOf,
  stateOf,
} from './testing/fixtures.js';
import { openRedisStore } from './testing/store-harness.js';
import type { RedisStoreHandle } from './testing/store-harness.js';

/** The key layout: a tagged hash "<tag>.<hash>" is written {<tag>}<hash> (slot-tags.ts). */
const slotted = (hash: string) => hash.replace(/^([0-9a-f]{8})\./, '{$1}');
/** A transaction's own keys carry its id's first eight hex digits as their tag. */
const txKey = (id: string) => `tx:{${id.slice(0, 8)}}${id}`;
const hotxKey = (id: string) => `hotx:{${id.slice(0, 8)}}${id}`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');
/** An identity session's index: the hash of its environment and sid. */
const idsKey = (environmentKey: string, sid: string) =>
  `ids:${sha256(`${environmentKey}\n${sid}`)}`;

describe('Redis AuthFlowStore', () => {
  let handle: RedisStoreHandle;
  /** A connection without key prefix, to look at the keys as Redis stores them. */
  let raw: Redis;
  const full = (key: string) => `${handle.keyPrefix}${key}`;
  const expiresAt = (key: string) => raw.pexpiretime(full(key));
  const exists = async (key: string) => (await raw.exists(full(key))) === 1;

  beforeAll(async () => {
    handle = await openRedisStore();
    raw = new Redis(handle.url, { lazyConnect: true });
    await raw.connect();
  });
  afterAll(async () => {
    raw?.disconnect();
    await handle?.close();
  });

  it('keeps a transaction in tx:{<tag>}<id> and txs:{<tag>}<stateHash> (one slot), both expiring at expiresAt; consume drops txs, bind moves tx to keepUntil', async () => {
    const now = Date.now();
    const transaction = newTransaction(now);
    await handle.store.createTransaction(transaction);
    expect(await raw.type(full(txKey(transaction.id)))).toBe('hash');
    expect(await raw.get(full(`txs:${slotted(transaction.stateHash)}`))).toBe(transaction.id);
    expect(await expiresAt(txKey(transaction.id))).toBe(transaction.expiresAt);
    expect(await expiresAt(`txs:${slotted(transaction.stateHash)}`)).toBe(transaction.expiresAt);

    await handle.store.consumeTransaction(stateOf(transaction), now);
    expect(await exists(`txs:${slotted(transaction.stateHash)}`)).toBe(false);

    const keepUntil = now + 60 * MINUTE;
    await handle.store.bindTransaction(transaction.id, {
      userId: randomUUID(),
      sessionId: randomUUID(),
      keepUntil,
    });
    expect(await expiresAt(txKey(transaction.id))).toBe(keepUntil);
  });

  it('keeps the hotx:<transactionId> marker until the later of the transaction and the handoff expiry; redeem deletes ho:<codeHash> of a handoff naming no session', async () => {
    const now = Date.now();
    const transaction = newTransaction(now);
    await handle.store.createTransaction(transaction);
    const handoff = newHandoff(transaction, now);
    await handle.store.issueHandoff(handoff);
    expect(await expiresAt(`ho:${slotted(handoff.codeHash)}`)).toBe(handoff.expiresAt);
    expect(await expiresAt(hotxKey(transaction.id))).toBe(transaction.expiresAt);

    await handle.store.redeemHandoff(keyOf(handoff), now, presenterOf(handoff));
    expect(await exists(`ho:${slotted(handoff.codeHash)}`)).toBe(false);
    expect(await exists(hotxKey(transaction.id))).toBe(true);

    // Without a transaction key (already expired), the marker lives as long as the handoff.
    const orphan = newHandoff(newTransaction(now), now);
    await handle.store.issueHandoff(orphan);
    expect(await expiresAt(hotxKey(orphan.transactionId))).toBe(orphan.expiresAt);
  });

  it("indexes sessions in the sorted set us:<userId> (score = expiresAt), which expires with the user's last session; revoke removes the member", async () => {
    const now = Date.now();
    const userId = randomUUID();
    const short = newSession(now, { userId, expiresAt: now + 10 * MINUTE });
    const long = newSession(now, { userId, expiresAt: now + 120 * MINUTE });
    await handle.store.createSession(long);
    await handle.store.createSession(short);
    expect(await expiresAt(`s:${slotted(short.tokenHash)}`)).toBe(short.expiresAt);
    expect(await raw.zrange(full(`us:${userId}`), '0', '-1', 'WITHSCORES')).toEqual([
      short.tokenHash,
      String(short.expiresAt),
      long.tokenHash,
      String(long.expiresAt),
    ]);
    expect(await expiresAt(`us:${userId}`)).toBe(long.expiresAt);

    await handle.store.revokeSession(long.tokenHash, now);
    expect(await raw.zrange(full(`us:${userId}`), '0', '-1')).toEqual([short.tokenHash]);
    await handle.store.revokeUserSessions(userId, now);
    expect(await exists(`us:${userId}`)).toBe(false);
    expect(await exists(`s:${slotted(short.tokenHash)}`)).toBe(false);
  });

  it('indexes a session with a sid in ids:<hash of environment and sid> (score = expiresAt), which expires with its last session; revoke removes the member', async () => {
    const now = Date.now();
    const sid = `sid-${randomUUID()}`;
    const first = newSession(now, { identitySessionId: sid, expiresAt: now + 10 * MINUTE });
    const second = newSession(now, { identitySessionId: sid, expiresAt: now + 20 * MINUTE });
    await handle.store.createSession(first);
    await handle.store.createSession(second);
    const index = idsKey('PROD', sid);
    expect(await raw.zrange(full(index), '0', '-1', 'WITHSCORES')).toEqual([
      first.tokenHash,
      String(first.expiresAt),
      second.tokenHash,
      String(second.expiresAt),
    ]);
    expect(await expiresAt(index)).toBe(second.expiresAt);
    await handle.store.revokeSession(first.tokenHash, now);
    expect(await raw.zrange(full(index), '0', '-1')).toEqual([second.tokenHash]);
    // A session without a sid is in no such index.
    const indexes = await raw.keys(`${handle.keyPrefix}ids:*`);
    await handle.store.createSession(newSession(now));
    expect(await raw.keys(`${handle.keyPrefix}ids:*`)).toEqual(indexes);
  });

  it('stores the sid as an eleventh field only when there is one, and reads ten fields as none', async () => {
    const now = Date.now();
    const session = newSession(now, { identitySessionId: 'sid-x', idTokenEncrypted: null });
    await handle.store.createSession(session);
    const key = full(`s:${slotted(session.tokenHash)}`);
    const stored = (await raw.get(key)) ?? '';
    const lines = stored.split('\n');
    const rest = JSON.parse(lines[3] ?? '[]') as unknown[];
    expect(rest).toHaveLength(11);
    lines[3] = JSON.stringify(rest.slice(0, 10));
    await raw.set(key, lines.join('\n'), 'KEEPTTL');
    await expect(handle.store.getSession(session.tokenHash, now)).resolves.toEqual({
      ...session,
      identitySessionId: null,
    });
    const withoutSid = newSession(now, { idTokenEncrypted: null });
    await handle.store.createSession(withoutSid);
    const plain = (await raw.get(full(`s:${slotted(withoutSid.tokenHash)}`))) ?? '';
    expect(JSON.parse(plain.split('\n')[3] ?? '')).toHaveLength(10);
  });

  it('keeps an acceptOnce key as once:<hash of the key> until its end, when Redis forgets it', async () => {
    const now = Date.now();
    const key = `jti:${randomUUID()}`;
    await expect(handle.store.acceptOnce(key, now + MINUTE, now)).resolves.toBe(true);
    expect(await expiresAt(`once:${sha256(key)}`)).toBe(now + MINUTE);
  });

  it('keeps a session whose token has no slot tag (signed in before tags) at s:<hash>: found, revoked with its user', async () => {
    const now = Date.now();
    const userId = randomUUID();
    const bare = newSession(now, { userId, tokenHash: fakeHash() });
    await handle.store.createSession(bare);
    expect(await expiresAt(`s:${bare.tokenHash}`)).toBe(bare.expiresAt);
    await expect(handle.store.getSession(bare.tokenHash, now)).resolves.toEqual(bare);
    const tagged = newSession(now, { userId });
    await handle.store.createSession(tagged);
    await expect(handle.store.revokeUserSessions(userId, now)).resolves.toBe(2);
    await expect(handle.store.getSession(bare.tokenHash, now)).resolves.toBe(undefined);
    expect(await exists(`us:${userId}`)).toBe(false);
  });

  it('indexes a session before writing it: a refused callback leaves a member that revoke and strip skip until its expiry', async () => {
    const now = Date.now();
    const userId = randomUUID();
    const unconsumed = newTransaction(now);
    await handle.store.createTransaction(unconsumed);
    const refused = newSession(now, { userId, tokenHash: hashIn(unconsumed) });
    await expect(
      handle.store.createBoundSession({
        transactionId: unconsumed.id,
        keepUntil: now + 60 * MINUTE,
        session: refused,
      }),
    ).resolves.toBe('not_found');
    expect(await raw.zscore(full(`us:${userId}`), refused.tokenHash)).toBe(
      String(refused.expiresAt),
    );
    const live = newSession(now, { userId });
    await handle.store.createSession(live);

    await expect(handle.store.stripUserPermissions(userId)).resolves.toBe(1);
    await expect(handle.store.revokeUserSessions(userId, now)).resolves.toBe(1);
    await expect(handle.store.getSession(live.tokenHash, now)).resolves.toBe(undefined);
    // The member of the session never written stays (its login might still be writing it).
    expect(await raw.zrange(full(`us:${userId}`), '0', '-1')).toEqual([refused.tokenHash]);
    expect(await expiresAt(`us:${userId}`)).toBe(refused.expiresAt);
  });

  it('writes only under its key prefix: a store on another prefix sees nothing of it', async () => {
    const now = Date.now();
    const transaction = newTransaction(now);
    await handle.store.createTransaction(transaction);
    const other = await connectRedis({
      url: handle.url,
      keyPrefix: `${handle.keyPrefix}other:`,
      timeoutMs: 5_000,
    });
    try {
      const otherStore = createRedisAuthFlowStore(other);
      await expect(otherStore.getTransaction(transaction.id)).resolves.toBe(undefined);
      await expect(otherStore.consumeTransaction(stateOf(transaction), now)).resolves.toBe(
        undefined,
      );
    } finally {
      other.disconnect();
    }
    const keys = await raw.keys(`${handle.keyPrefix}*${transaction.id}*`);
    expect(keys).toEqual([full(txKey(transaction.id))]);
  });

  it("keeps a pending handoff in ho:<codeHash> in its session's slot, the compared fields as header lines; its redeem deletes it (spec 2.9: single use)", async () => {
    const now = Date.now();
    const transaction = newTransaction(now);
    await handle.store.createTransaction(transaction);
    const session = newSession(now);
    await handle.store.createSession(session);
    const handoff = newHandoff(transaction, now, {
      userId: session.userId,
      sessionId: session.id,
      sessionTokenHash: session.tokenHash,
      snapshot: newHandoffSnapshot(),
    });
    await handle.store.issueHandoff(handoff);
    const key = `ho:${slotted(handoff.codeHash)}`;
    expect(handoff.codeHash.slice(0, 8)).toBe(session.tokenHash.slice(0, 8));
    const pending = await raw.get(full(key));
    expect(pending).toMatch(
      new RegExp(
        `^${handoff.expiresAt}\\n${handoff.platformKey}\\n${handoff.callbackUrl}\\n${session.tokenHash}\\n\\{"transactionId":"`,
      ),
    );
    // The sealed session token is kept as it came, and nothing else secret.
    expect(pending).toContain(JSON.stringify(handoff.sessionTokenEncrypted));
    expect(await expiresAt(key)).toBe(handoff.expiresAt);

    await handle.store.redeemHandoff(keyOf(handoff), now, presenterOf(handoff));
    expect(await exists(key)).toBe(false);
  });

  it('keeps the sealed ID token as bytes after the text (a quarter smaller)', async () => {
    const now = Date.now();
    const sealed = fakeCiphertext(460);
    const session = newSession(now, { idTokenEncrypted: sealed, snapshot: newSessionSnapshot() });
    await handle.store.createSession(session);
    const stored = await raw.getBuffer(full(`s:${slotted(session.tokenHash)}`));
    expect(stored).not.toBeNull();
    // The text part names the bytes (0) instead of holding the ciphertext.
    expect(stored!.toString('latin1')).not.toContain(sealed.split('.')[3]);
    expect(stored!.length).toBeLessThan(sealed.length + 300);
    await expect(handle.store.getSession(session.tokenHash, now)).resolves.toEqual(session);
    // Lua rewrites keep the bytes intact (permissions stripped in place).
    await handle.store.stripUserPermissions(session.userId);
    await expect(handle.store.getSession(session.tokenHash, now)).resolves.toEqual({
      ...session,
      permissions: [],
    });
    await expect(handle.store.revokeSession(session.tokenHash, now)).resolves.toEqual({
      ...session,
      permissions: [],
    });
  });

  describe('memory per live session (MEMORY USAGE)', () => {
    /** Bytes of s:<tokenHash>, and what each further session adds to us:<userId>. */
    async function measure(idTokenEncrypted: string | null, permissions?: string[]) {
      const now = Date.now();
      const userId = randomUUID();
      const sessions = Array.from({ length: 5 }, () =>
        newSession(now, {
          userId,
          idTokenEncrypted,
          snapshot: newSessionSnapshot(),
          ...(permissions === undefined ? {} : { permissions }),
        }),
      );
      const indexBytes: number[] = [];
      for (const session of sessions) {
        await handle.store.createSession(session);
        indexBytes.push(Number(await raw.memory('USAGE', full(`us:${userId}`), 'SAMPLES', 0)));
      }
      const first = sessions[0];
      if (!first) throw new Error('no session');
      const sessionKey = Number(
        await raw.memory('USAGE', full(`s:${slotted(first.tokenHash)}`), 'SAMPLES', 0),
      );
      const perMember = ((indexBytes[4] ?? 0) - (indexBytes[0] ?? 0)) / 4;
      return { sessionKey, perMember, indexForOne: indexBytes[0] ?? 0 };
    }

    it('a session with its introspection snapshot, three permissions and no ID token costs under 640 bytes, with its index share', async () => {
      // Issuer, subject, e-mail, e-mail verified and tier are about 125 bytes of value, for
      // the one PostgreSQL read fewer on every introspection.
      const { sessionKey, perMember, indexForOne } = await measure(null);
      expect(sessionKey + perMember).toBeLessThan(640);
      expect(indexForOne).toBeLessThan(256);
    });

    it("a platform user's session with its snapshot and a sealed RS256 ID token (420 bytes packed) stays under 1 KiB with its index share", async () => {
      // The bench measures the same with real sign-ins (docs/benchmarks.md).
      const { sessionKey, perMember } = await measure(fakeCiphertext(420), []);
      expect(sessionKey + perMember).toBeLessThan(1024);
    });
  });
});
