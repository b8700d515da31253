// The contract every AuthFlowStore implementation passes: Redis (Lua), SQL on real PostgreSQL
// and SQL on PGlite in memory, against real servers.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type {
  AuthFlowStore,
  RedeemAnswer,
  RedeemedHandoff,
  SessionRecord,
  TransactionRecord,
} from './auth-flow-store.js';
import {
  MINUTE,
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
import { storeFactories } from './testing/store-harness.js';
import type { OpenStore } from './testing/store-harness.js';

const CONCURRENT_CALLS = 50;

describe.each(storeFactories)('AuthFlowStore contract: $name', (factory) => {
  let opened: OpenStore;
  let store: AuthFlowStore;

  beforeAll(async () => {
    opened = await factory.open();
    store = opened.store;
  });
  afterAll(async () => {
    await opened?.close();
  });

  /** Spreads calls over the peers (separate connections where the store has them). */
  function spread<T>(call: (peer: AuthFlowStore) => Promise<T>): Promise<T[]> {
    return Promise.all(
      Array.from({ length: CONCURRENT_CALLS }, (_, index) =>
        call(opened.peers[index % opened.peers.length] ?? store),
      ),
    );
  }

  /** A redeem's answer that is a handoff (or undefined), for reading its fields. */
  async function redeemed(answer: Promise<RedeemAnswer>): Promise<RedeemedHandoff | undefined> {
    const value = await answer;
    if (value === 'too_late') throw new Error('The redeem answered too_late');
    return value;
  }

  /** A transaction that was created and consumed, as the callback leaves it. */
  async function consumedTransaction(now: number) {
    const transaction = newTransaction(now);
    await store.createTransaction(transaction);
    const consumed = await store.consumeTransaction(stateOf(transaction), now);
    if (!consumed) throw new Error('consume failed');
    return consumed;
  }

  describe('transactions (spec 3.1)', () => {
    it('consumeTransaction returns the record once with consumedAt = now; a second consume is undefined', async () => {
      const now = Date.now();
      const transaction = newTransaction(now);
      await store.createTransaction(transaction);

      const consumed = await store.consumeTransaction(stateOf(transaction), now + 1_000);
      expect(consumed).toEqual({ ...transaction, consumedAt: now + 1_000 });
      await expect(store.consumeTransaction(stateOf(transaction), now + 2_000)).resolves.toBe(
        undefined,
      );
    });

    it('an unknown state hash consumes nothing', async () => {
      await expect(
        store.consumeTransaction(stateOf(newTransaction(Date.now())), Date.now()),
      ).resolves.toBe(undefined);
    });

    it('an expired transaction cannot be consumed (now >= expiresAt, exact to the millisecond, before Redis evicts it)', async () => {
      const now = Date.now();
      const transaction = newTransaction(now, { expiresAt: now + 10 * MINUTE });
      await store.createTransaction(transaction);

      await expect(
        store.consumeTransaction(stateOf(transaction), transaction.expiresAt),
      ).resolves.toBe(undefined);
      await expect(
        store.consumeTransaction(stateOf(transaction), transaction.expiresAt + 1),
      ).resolves.toBe(undefined);
      // Still consumable one millisecond earlier: the refusals above changed nothing.
      const consumed = await store.consumeTransaction(
        stateOf(transaction),
        transaction.expiresAt - 1,
      );
      expect(consumed?.id).toBe(transaction.id);
    });

    it(`${CONCURRENT_CALLS} concurrent consumeTransaction calls for one state: exactly one gets the record`, async () => {
      const now = Date.now();
      const transaction = newTransaction(now);
      await store.createTransaction(transaction);

      const results = await spread((peer) => peer.consumeTransaction(stateOf(transaction), now));
      const winners = results.filter((result) => result !== undefined);
      expect(winners).toHaveLength(1);
      expect(winners[0]?.id).toBe(transaction.id);
    });

    it('createTransaction rejects a second transaction with the same state hash', async () => {
      const now = Date.now();
      const first = newTransaction(now);
      await store.createTransaction(first);
      await expect(
        store.createTransaction(newTransaction(now, { stateHash: first.stateHash })),
      ).rejects.toThrow();
      // The first one is intact.
      expect((await store.consumeTransaction(stateOf(first), now))?.id).toBe(first.id);
    });

    it('getTransaction reads a transaction, consumed or not; unknown or malformed ids are undefined', async () => {
      const now = Date.now();
      const transaction = newTransaction(now);
      await store.createTransaction(transaction);
      await expect(store.getTransaction(transaction.id)).resolves.toEqual(transaction);
      await store.consumeTransaction(stateOf(transaction), now);
      await expect(store.getTransaction(transaction.id)).resolves.toEqual({
        ...transaction,
        consumedAt: now,
      });
      await expect(store.getTransaction(randomUUID())).resolves.toBe(undefined);
      await expect(store.getTransaction('not-a-uuid')).resolves.toBe(undefined);
    });

    it('getTransaction is undefined once the transaction expired', async () => {
      const now = Date.now();
      const transaction = newTransaction(now, { expiresAt: now + 300 });
      await store.createTransaction(transaction);
      await expect(store.getTransaction(transaction.id)).resolves.toEqual(transaction);
      await sleep(transaction.expiresAt - Date.now() + 50);
      await expect(store.getTransaction(transaction.id)).resolves.toBe(undefined);
    });

    it('bindTransaction: bound, then already_bound for the same or another user; the consumed transaction stays readable with userId, sessionId and the expiry extended to keepUntil', async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const binding = {
        userId: randomUUID(),
        sessionId: randomUUID(),
        keepUntil: now + 60 * MINUTE,
      };

      await expect(store.bindTransaction(transaction.id, binding)).resolves.toBe('bound');
      await expect(store.bindTransaction(transaction.id, binding)).resolves.toBe('already_bound');
      await expect(
        store.bindTransaction(transaction.id, { ...binding, userId: randomUUID() }),
      ).resolves.toBe('already_bound');

      await expect(store.getTransaction(transaction.id)).resolves.toEqual({
        ...transaction,
        userId: binding.userId,
        sessionId: binding.sessionId,
        expiresAt: binding.keepUntil,
      });
      // The state stays spent after the bind.
      await expect(store.consumeTransaction(stateOf(transaction), now)).resolves.toBe(undefined);
    });

    it('bindTransaction never shortens the expiry (keepUntil earlier than expiresAt)', async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const binding = { userId: randomUUID(), sessionId: randomUUID(), keepUntil: now + 1_000 };
      await expect(store.bindTransaction(transaction.id, binding)).resolves.toBe('bound');
      expect((await store.getTransaction(transaction.id))?.expiresAt).toBe(transaction.expiresAt);
    });

    it('bindTransaction answers not_found for an unknown, malformed, unconsumed or expired transaction', async () => {
      const now = Date.now();
      const binding = { userId: randomUUID(), sessionId: randomUUID(), keepUntil: now + MINUTE };
      await expect(store.bindTransaction(randomUUID(), binding)).resolves.toBe('not_found');
      await expect(store.bindTransaction('not-a-uuid', binding)).resolves.toBe('not_found');

      const unconsumed = newTransaction(now);
      await store.createTransaction(unconsumed);
      await expect(store.bindTransaction(unconsumed.id, binding)).resolves.toBe('not_found');
      expect((await store.getTransaction(unconsumed.id))?.userId).toBe(null);

      const shortLived = newTransaction(now, { expiresAt: now + 300 });
      await store.createTransaction(shortLived);
      await store.consumeTransaction(stateOf(shortLived), now);
      await sleep(shortLived.expiresAt - Date.now() + 50);
      await expect(store.bindTransaction(shortLived.id, binding)).resolves.toBe('not_found');
    });

    it(`${CONCURRENT_CALLS} concurrent bindTransaction calls with different users: exactly one is bound and its user stays`, async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const bindings = Array.from({ length: CONCURRENT_CALLS }, () => ({
        userId: randomUUID(),
        sessionId: randomUUID(),
        keepUntil: now + 60 * MINUTE,
      }));
      let next = 0;
      const results = await spread((peer) => {
        const binding = bindings[next++];
        if (!binding) throw new Error('no binding');
        return peer.bindTransaction(transaction.id, binding);
      });
      expect(results.filter((result) => result === 'bound')).toHaveLength(1);
      expect(results.filter((result) => result === 'already_bound')).toHaveLength(
        CONCURRENT_CALLS - 1,
      );
      const winner = bindings[results.indexOf('bound')];
      const stored = await store.getTransaction(transaction.id);
      expect({ userId: stored?.userId, sessionId: stored?.sessionId }).toEqual({
        userId: winner?.userId,
        sessionId: winner?.sessionId,
      });
    });
  });

  describe('handoffs (spec 2.9, 3.2)', () => {
    it('issueHandoff for one transaction: issued, then conflict for a second code, also after the first was redeemed', async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const first = newHandoff(transaction, now);

      await expect(store.issueHandoff(first)).resolves.toBe('issued');
      await expect(store.issueHandoff(newHandoff(transaction, now))).resolves.toBe('conflict');
      await expect(store.redeemHandoff(keyOf(first), now, presenterOf(first))).resolves.toEqual(
        first,
      );
      await expect(store.issueHandoff(newHandoff(transaction, now))).resolves.toBe('conflict');
    });

    it('issueHandoff conflicts after the first handoff expired while its transaction lives on', async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const first = newHandoff(transaction, now, { expiresAt: now + 300 });
      await expect(store.issueHandoff(first)).resolves.toBe('issued');
      await sleep(first.expiresAt - Date.now() + 50);
      await expect(store.redeemHandoff(keyOf(first), Date.now(), presenterOf(first))).resolves.toBe(
        undefined,
      );
      await expect(store.issueHandoff(newHandoff(transaction, Date.now()))).resolves.toBe(
        'conflict',
      );
    });

    it(`${CONCURRENT_CALLS} concurrent issueHandoff calls for one transaction with different codes: exactly one is issued`, async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const handoffs = Array.from({ length: CONCURRENT_CALLS }, () => newHandoff(transaction, now));
      let next = 0;
      const results = await spread((peer) => {
        const handoff = handoffs[next++];
        if (!handoff) throw new Error('no handoff');
        return peer.issueHandoff(handoff);
      });
      expect(results.filter((result) => result === 'issued')).toHaveLength(1);
      const issued = handoffs[results.indexOf('issued')];
      if (!issued) throw new Error('none issued');
      await expect(store.redeemHandoff(keyOf(issued), now, presenterOf(issued))).resolves.toEqual(
        issued,
      );
      const losers = handoffs.filter((handoff) => handoff !== issued);
      for (const loser of losers.slice(0, 3)) {
        await expect(store.redeemHandoff(keyOf(loser), now, presenterOf(loser))).resolves.toBe(
          undefined,
        );
      }
    });

    it('redeemHandoff returns the full record (with the encrypted session token) once; a second redeem is undefined', async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const handoff = newHandoff(transaction, now);
      await store.issueHandoff(handoff);

      await expect(
        store.redeemHandoff(keyOf(handoff), now + 1_000, presenterOf(handoff)),
      ).resolves.toEqual(handoff);
      await expect(
        store.redeemHandoff(keyOf(handoff), now + 2_000, presenterOf(handoff)),
      ).resolves.toBe(undefined);
    });

    it("redeemHandoff by another platform's or another callback's presenter answers undefined and leaves the code redeemable by its own", async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const session = newSession(now, { userId: transaction.userId ?? randomUUID() });
      await store.createSession(session);
      const handoff = newHandoff(transaction, now, {
        sessionId: session.id,
        sessionTokenHash: session.tokenHash,
        snapshot: newHandoffSnapshot(),
      });
      await store.issueHandoff(handoff);
      const own = presenterOf(handoff);

      const strangers = [
        { ...own, platformKey: `${own.platformKey}_OTHER` },
        { ...own, callbackUrl: `${own.callbackUrl}/other` },
        { platformKey: `${own.platformKey}_OTHER`, callbackUrl: 'https://other.example.com/cb' },
      ];
      for (const stranger of strangers) {
        await expect(store.redeemHandoff(keyOf(handoff), now, stranger)).resolves.toBe(undefined);
      }
      const first = await redeemed(store.redeemHandoff(keyOf(handoff), now, own));
      expect(first?.codeHash).toBe(handoff.codeHash);
      expect(first?.session?.permissions).toEqual(session.permissions);
    });

    it(`${CONCURRENT_CALLS} concurrent redeemHandoff calls of one code over separate connections: exactly one wins`, async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const handoff = newHandoff(transaction, now);
      await store.issueHandoff(handoff);

      const results = await spread((peer) =>
        peer.redeemHandoff(keyOf(handoff), now, presenterOf(handoff)),
      );
      const winners = results.filter((result) => result !== undefined);
      expect(winners).toEqual([handoff]);
    });

    it(`${CONCURRENT_CALLS} concurrent redeemHandoff calls of one code on one connection (pipelined): exactly one wins`, async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const handoff = newHandoff(transaction, now);
      await store.issueHandoff(handoff);

      const results = await Promise.all(
        Array.from({ length: CONCURRENT_CALLS }, () =>
          store.redeemHandoff(keyOf(handoff), now, presenterOf(handoff)),
        ),
      );
      expect(results.filter((result) => result !== undefined)).toEqual([handoff]);
    });

    it('an expired handoff cannot be redeemed (now >= expiresAt, exact to the millisecond)', async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const handoff = newHandoff(transaction, now);
      await store.issueHandoff(handoff);

      await expect(
        store.redeemHandoff(keyOf(handoff), handoff.expiresAt, presenterOf(handoff)),
      ).resolves.toBe(undefined);
      await expect(
        store.redeemHandoff(keyOf(handoff), handoff.expiresAt + 1, presenterOf(handoff)),
      ).resolves.toBe(undefined);
      // One millisecond before the expiry it was still redeemable: the refusals changed nothing.
      await expect(
        store.redeemHandoff(keyOf(handoff), handoff.expiresAt - 1, presenterOf(handoff)),
      ).resolves.toEqual(handoff);
    });

    it('a code or a state whose parts name two slots names nothing (no CROSSSLOT on a Cluster)', async () => {
      const now = Date.now();
      const presenter = { platformKey: 'SHOP', callbackUrl: 'https://shop.example.com/cb' };
      for (const sessionTokenHash of ['aaaaaaaa.' + 'A'.repeat(43), 'B'.repeat(43)]) {
        await expect(
          store.redeemHandoff(
            { codeHash: `bbbbbbbb.${'C'.repeat(43)}`, sessionTokenHash },
            now,
            presenter,
          ),
        ).resolves.toBe(undefined);
      }
      const transaction = newTransaction(now);
      await store.createTransaction(transaction);
      const elsewhere = newTransaction(now);
      await expect(
        store.consumeTransaction(
          { stateHash: elsewhere.stateHash, transactionId: transaction.id },
          now,
        ),
      ).resolves.toBe(undefined);
      await expect(
        store.consumeTransaction({ stateHash: transaction.stateHash, transactionId: 'x' }, now),
      ).resolves.toBe(undefined);
      expect((await store.consumeTransaction(stateOf(transaction), now))?.id).toBe(transaction.id);
    });

    it('an unknown code redeems nothing', async () => {
      await expect(
        store.redeemHandoff({ codeHash: 'no-such-code-hash' }, Date.now(), {
          platformKey: 'SHOP',
          callbackUrl: 'https://shop.example.com/cb',
        }),
      ).resolves.toBe(undefined);
    });
  });

  describe('sessions (spec 2.7, 3.3)', () => {
    it('getSession returns a live session; undefined when unknown or once now >= expiresAt', async () => {
      const now = Date.now();
      const session = newSession(now);
      await store.createSession(session);

      await expect(store.getSession(session.tokenHash, now)).resolves.toEqual(session);
      await expect(store.getSession(session.tokenHash, session.expiresAt - 1)).resolves.toEqual(
        session,
      );
      await expect(store.getSession(session.tokenHash, session.expiresAt)).resolves.toBe(undefined);
      await expect(store.getSession('no-such-token-hash', now)).resolves.toBe(undefined);
    });

    it('keeps a session without platform, permissions or ID token as it is', async () => {
      const now = Date.now();
      const session = newSession(now, {
        platformKey: null,
        permissions: [],
        idTokenEncrypted: null,
        identitySessionId: null,
        environmentKey: 'STAGING',
      });
      await store.createSession(session);
      await expect(store.getSession(session.tokenHash, now)).resolves.toEqual(session);
    });

    it('createSession rejects a second session with the same token hash', async () => {
      const now = Date.now();
      const session = newSession(now);
      await store.createSession(session);
      await expect(
        store.createSession(newSession(now, { tokenHash: session.tokenHash })),
      ).rejects.toThrow();
      await expect(store.getSession(session.tokenHash, now)).resolves.toEqual(session);
    });

    it('revokeSession returns the live session once; afterwards get and revoke are undefined', async () => {
      const now = Date.now();
      const session = newSession(now);
      await store.createSession(session);

      await expect(store.revokeSession(session.tokenHash, now)).resolves.toEqual(session);
      await expect(store.getSession(session.tokenHash, now)).resolves.toBe(undefined);
      await expect(store.revokeSession(session.tokenHash, now)).resolves.toBe(undefined);
      await expect(store.revokeSession('no-such-token-hash', now)).resolves.toBe(undefined);
    });

    it(`${CONCURRENT_CALLS} concurrent revokeSession calls: exactly one returns the session`, async () => {
      const now = Date.now();
      const session = newSession(now);
      await store.createSession(session);
      const results = await spread((peer) => peer.revokeSession(session.tokenHash, now));
      expect(results.filter((result) => result !== undefined)).toEqual([session]);
    });

    it('revokeSession of an expired session returns undefined', async () => {
      const now = Date.now();
      const session = newSession(now);
      await store.createSession(session);
      await expect(store.revokeSession(session.tokenHash, session.expiresAt)).resolves.toBe(
        undefined,
      );
    });

    it("revokeUserSessions revokes and counts only that user's live sessions", async () => {
      const now = Date.now();
      const userId = randomUUID();
      const live = [newSession(now, { userId }), newSession(now, { userId })];
      const revokedEarlier = newSession(now, { userId });
      const expiring = newSession(now, { userId, expiresAt: now + MINUTE });
      const otherUser = newSession(now);
      for (const session of [...live, revokedEarlier, expiring, otherUser]) {
        await store.createSession(session);
      }
      await store.revokeSession(revokedEarlier.tokenHash, now);

      // At now + MINUTE `expiring` has expired: only the two live ones count.
      await expect(store.revokeUserSessions(userId, now + MINUTE)).resolves.toBe(2);
      for (const session of [...live, revokedEarlier]) {
        await expect(store.getSession(session.tokenHash, now)).resolves.toBe(undefined);
      }
      await expect(store.getSession(otherUser.tokenHash, now)).resolves.toEqual(otherUser);
      await expect(store.revokeUserSessions(userId, now + MINUTE)).resolves.toBe(0);
      await expect(store.revokeUserSessions(randomUUID(), now)).resolves.toBe(0);
    });

    it("stripUserPermissions empties the permissions of that user's live sessions only; they stay live", async () => {
      const now = Date.now();
      const userId = randomUUID();
      const live = [newSession(now, { userId }), newSession(now, { userId, platformKey: null })];
      const withoutPermissions = newSession(now, { userId, permissions: [] });
      const revoked = newSession(now, { userId });
      const otherUser = newSession(now);
      for (const session of [...live, withoutPermissions, revoked, otherUser]) {
        await store.createSession(session);
      }
      await store.revokeSession(revoked.tokenHash, now);

      await expect(store.stripUserPermissions(userId)).resolves.toBe(2);
      for (const session of live) {
        await expect(store.getSession(session.tokenHash, now)).resolves.toEqual({
          ...session,
          permissions: [],
        });
      }
      await expect(store.getSession(withoutPermissions.tokenHash, now)).resolves.toEqual(
        withoutPermissions,
      );
      await expect(store.getSession(revoked.tokenHash, now)).resolves.toBe(undefined);
      await expect(store.getSession(otherUser.tokenHash, now)).resolves.toEqual(otherUser);
      // Nothing left to strip; the stripped sessions can still be revoked.
      await expect(store.stripUserPermissions(userId)).resolves.toBe(0);
      await expect(store.revokeUserSessions(userId, now)).resolves.toBe(3);
    });

    it('stripUserPermissions leaves an expired session alone', async () => {
      const now = Date.now();
      const userId = randomUUID();
      const expired = newSession(now - 2 * MINUTE, { userId, expiresAt: now - MINUTE });
      await store.createSession(expired);
      await expect(store.stripUserPermissions(userId)).resolves.toBe(0);
    });
  });

  describe("a user's own sessions (listUserSessions, revokeUserSession, revokeUserSessions)", () => {
    it("listUserSessions answers the user's live sessions newest first; revoked, expired and other users' are not listed", async () => {
      const now = Date.now();
      const userId = randomUUID();
      const older = newSession(now - 2 * MINUTE, { userId, identitySessionId: 'sid-1' });
      const newer = newSession(now - MINUTE, { userId, platformKey: null });
      const revoked = newSession(now - MINUTE, { userId });
      const expired = newSession(now - 3 * MINUTE, { userId, expiresAt: now });
      const otherUser = newSession(now);
      for (const session of [older, newer, revoked, expired, otherUser]) {
        await store.createSession(session);
      }
      await store.revokeSession(revoked.tokenHash, now);

      await expect(store.listUserSessions(userId, now)).resolves.toEqual([newer, older]);
      await expect(store.listUserSessions(otherUser.userId, now)).resolves.toEqual([otherUser]);
      await expect(store.listUserSessions(randomUUID(), now)).resolves.toEqual([]);
      await expect(store.listUserSessions('not-a-uuid', now)).resolves.toEqual([]);
    });

    it("revokeUserSession ends one live session of that user by its id; another user's id, an unknown or malformed one ends nothing", async () => {
      const now = Date.now();
      const userId = randomUUID();
      const kept = newSession(now, { userId });
      const ended = newSession(now, { userId, identitySessionId: 'sid-2' });
      const otherUser = newSession(now);
      for (const session of [kept, ended, otherUser]) await store.createSession(session);

      await expect(store.revokeUserSession(userId, otherUser.id, now)).resolves.toBe(undefined);
      await expect(store.revokeUserSession(otherUser.userId, ended.id, now)).resolves.toBe(
        undefined,
      );
      await expect(store.revokeUserSession(userId, randomUUID(), now)).resolves.toBe(undefined);
      await expect(store.revokeUserSession(userId, 'not-a-uuid', now)).resolves.toBe(undefined);
      await expect(store.revokeUserSession('not-a-uuid', ended.id, now)).resolves.toBe(undefined);

      await expect(store.revokeUserSession(userId, ended.id, now)).resolves.toEqual(ended);
      await expect(store.getSession(ended.tokenHash, now)).resolves.toBe(undefined);
      await expect(store.revokeUserSession(userId, ended.id, now)).resolves.toBe(undefined);
      await expect(store.listUserSessions(userId, now)).resolves.toEqual([kept]);
      await expect(store.getSession(otherUser.tokenHash, now)).resolves.toEqual(otherUser);
    });

    it('revokeUserSession of an expired session ends nothing', async () => {
      const now = Date.now();
      const session = newSession(now, { expiresAt: now + MINUTE });
      await store.createSession(session);
      await expect(
        store.revokeUserSession(session.userId, session.id, session.expiresAt),
      ).resolves.toBe(undefined);
    });

    it(`${CONCURRENT_CALLS} concurrent revokeUserSession calls: exactly one returns the session`, async () => {
      const now = Date.now();
      const session = newSession(now);
      await store.createSession(session);
      const results = await spread((peer) =>
        peer.revokeUserSession(session.userId, session.id, now),
      );
      expect(results.filter((result) => result !== undefined)).toEqual([session]);
    });

    it('revokeUserSessions with an exception keeps that session live and ends every other one of the user', async () => {
      const now = Date.now();
      const userId = randomUUID();
      const current = newSession(now, { userId });
      const others = [newSession(now, { userId }), newSession(now, { userId })];
      const otherUser = newSession(now);
      for (const session of [current, ...others, otherUser]) await store.createSession(session);

      await expect(store.revokeUserSessions(userId, now, current.id)).resolves.toBe(2);
      await expect(store.listUserSessions(userId, now)).resolves.toEqual([current]);
      await expect(store.getSession(otherUser.tokenHash, now)).resolves.toEqual(otherUser);
      // Another user's session id keeps nothing of this user's.
      await expect(store.revokeUserSessions(userId, now, otherUser.id)).resolves.toBe(1);
      await expect(store.listUserSessions(userId, now)).resolves.toEqual([]);
      await expect(store.getSession(otherUser.tokenHash, now)).resolves.toEqual(otherUser);
    });
  });

  describe('back-channel logout (revokeIdentitySessions, acceptOnce)', () => {
    it('records the identity session id of a session through create, get, list and revoke', async () => {
      const now = Date.now();
      const session = newSession(now, { identitySessionId: `sid-${randomUUID()}` });
      await store.createSession(session);
      await expect(store.getSession(session.tokenHash, now)).resolves.toEqual(session);
      await expect(store.listUserSessions(session.userId, now)).resolves.toEqual([session]);
      await expect(store.revokeSession(session.tokenHash, now)).resolves.toEqual(session);
    });

    it("with a sid, ends that environment's live sessions of the identity session, of every user, and returns them", async () => {
      const now = Date.now();
      const sid = `sid-${randomUUID()}`;
      const first = newSession(now, { identitySessionId: sid });
      const second = newSession(now, { identitySessionId: sid, platformKey: 'OTHER' });
      const otherEnvironment = newSession(now, {
        userId: first.userId,
        identitySessionId: sid,
        environmentKey: 'STAGING',
      });
      const otherSid = newSession(now, { userId: first.userId, identitySessionId: 'another' });
      const noSid = newSession(now, { userId: first.userId });
      const revoked = newSession(now, { identitySessionId: sid });
      const expired = newSession(now - 2 * MINUTE, { identitySessionId: sid, expiresAt: now });
      const all = [first, second, otherEnvironment, otherSid, noSid, revoked, expired];
      for (const session of all) await store.createSession(session);
      await store.revokeSession(revoked.tokenHash, now);

      const ended = await store.revokeIdentitySessions('PROD', { identitySessionId: sid }, now);
      expect(ended.map((session) => session.id).sort()).toEqual([first.id, second.id].sort());
      expect(ended.find((session) => session.id === first.id)).toEqual(first);
      for (const session of [first, second]) {
        await expect(store.getSession(session.tokenHash, now)).resolves.toBe(undefined);
      }
      for (const session of [otherEnvironment, otherSid, noSid]) {
        await expect(store.getSession(session.tokenHash, now)).resolves.toEqual(session);
      }
      await expect(
        store.revokeIdentitySessions('PROD', { identitySessionId: sid }, now),
      ).resolves.toEqual([]);
      await expect(
        store.revokeIdentitySessions('STAGING', { identitySessionId: sid }, now),
      ).resolves.toEqual([otherEnvironment]);
    });

    it("with a sid and a user, ends only that user's sessions of the identity session", async () => {
      const now = Date.now();
      const sid = `sid-${randomUUID()}`;
      const mine = newSession(now, { identitySessionId: sid });
      const theirs = newSession(now, { identitySessionId: sid });
      for (const session of [mine, theirs]) await store.createSession(session);

      await expect(
        store.revokeIdentitySessions('PROD', { identitySessionId: sid, userId: mine.userId }, now),
      ).resolves.toEqual([mine]);
      await expect(store.getSession(theirs.tokenHash, now)).resolves.toEqual(theirs);
      await expect(
        store.revokeIdentitySessions('PROD', { identitySessionId: sid, userId: 'bad' }, now),
      ).resolves.toEqual([]);
    });

    it("with only a user, ends all of that user's live sessions in that environment", async () => {
      const now = Date.now();
      const userId = randomUUID();
      const withSid = newSession(now, { userId, identitySessionId: `sid-${randomUUID()}` });
      const withoutSid = newSession(now - MINUTE, { userId });
      const otherEnvironment = newSession(now, { userId, environmentKey: 'STAGING' });
      const otherUser = newSession(now);
      for (const session of [withSid, withoutSid, otherEnvironment, otherUser]) {
        await store.createSession(session);
      }

      const ended = await store.revokeIdentitySessions('PROD', { userId }, now);
      expect(ended.map((session) => session.id).sort()).toEqual([withSid.id, withoutSid.id].sort());
      await expect(store.listUserSessions(userId, now)).resolves.toEqual([otherEnvironment]);
      await expect(store.getSession(otherUser.tokenHash, now)).resolves.toEqual(otherUser);
      await expect(store.revokeIdentitySessions('PROD', {}, now)).rejects.toThrow(TypeError);
    });

    it('a session created bound by the callback is found by its sid', async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const session = newSession(now, {
        tokenHash: hashIn(transaction),
        identitySessionId: `sid-${randomUUID()}`,
      });
      await expect(
        store.createBoundSession({ transactionId: transaction.id, keepUntil: now, session }),
      ).resolves.toBe('bound');
      const sid = session.identitySessionId ?? '';
      await expect(
        store.revokeIdentitySessions('PROD', { identitySessionId: sid }, now),
      ).resolves.toEqual([session]);
    });

    it('acceptOnce is true the first time a key is seen before its end, false afterwards and once it ended', async () => {
      const now = Date.now();
      const key = `jti:${randomUUID()}`;
      await expect(store.acceptOnce(key, now + MINUTE, now)).resolves.toBe(true);
      await expect(store.acceptOnce(key, now + MINUTE, now + 1)).resolves.toBe(false);
      await expect(store.acceptOnce(key, now + 2 * MINUTE, now + 2)).resolves.toBe(false);
      await expect(store.acceptOnce(`jti:${randomUUID()}`, now, now)).resolves.toBe(false);
      await expect(store.acceptOnce(`jti:${randomUUID()}`, now + MINUTE, now)).resolves.toBe(true);
    });

    it(`${CONCURRENT_CALLS} concurrent acceptOnce calls for one key: exactly one is true`, async () => {
      const now = Date.now();
      const key = `jti:${randomUUID()}`;
      const results = await spread((peer) => peer.acceptOnce(key, now + MINUTE, now));
      expect(results.filter((result) => result)).toHaveLength(1);
    });
  });

  /** A handoff naming its session, with the exchange snapshot, as the login issues it. */
  function handoffOf(transaction: TransactionRecord, session: SessionRecord, now: number) {
    return newHandoff(transaction, now, {
      userId: session.userId,
      sessionId: session.id,
      sessionTokenHash: session.tokenHash,
      snapshot: newHandoffSnapshot(),
    });
  }

  describe('what the hot paths read', () => {
    it("keeps the platform's centralOnboardingEnabled on the transaction through consume, get and bind", async () => {
      const now = Date.now();
      for (const centralOnboardingEnabled of [true, false]) {
        const transaction = newTransaction(now, { centralOnboardingEnabled });
        await store.createTransaction(transaction);
        await expect(store.getTransaction(transaction.id)).resolves.toEqual(transaction);
        const consumed = await store.consumeTransaction(stateOf(transaction), now);
        expect(consumed?.centralOnboardingEnabled).toBe(centralOnboardingEnabled);
      }
    });

    it('keeps the introspection snapshot of a session through get, strip and revoke', async () => {
      const now = Date.now();
      const session = newSession(now, { snapshot: newSessionSnapshot() });
      await store.createSession(session);
      await expect(store.getSession(session.tokenHash, now)).resolves.toEqual(session);
      await store.stripUserPermissions(session.userId);
      await expect(store.getSession(session.tokenHash, now)).resolves.toEqual({
        ...session,
        permissions: [],
      });
      await expect(store.revokeSession(session.tokenHash, now)).resolves.toEqual({
        ...session,
        permissions: [],
      });
    });

    it("redeemHandoff of a handoff naming its session answers the record with the exchange snapshot and the session's expiry and permissions", async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const session = newSession(now);
      await store.createSession(session);
      const handoff = handoffOf(transaction, session, now);
      await store.issueHandoff(handoff);

      await expect(store.redeemHandoff(keyOf(handoff), now, presenterOf(handoff))).resolves.toEqual(
        {
          ...handoff,
          session: { expiresAt: session.expiresAt, permissions: session.permissions },
        },
      );
    });

    it('redeemHandoff answers the permissions as they are now: stripped since issuance means none (spec 3.3)', async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const session = newSession(now);
      await store.createSession(session);
      const handoff = handoffOf(transaction, session, now);
      await store.issueHandoff(handoff);
      await store.stripUserPermissions(session.userId);

      const answer = await redeemed(store.redeemHandoff(keyOf(handoff), now, presenterOf(handoff)));
      expect(answer?.session).toEqual({ expiresAt: session.expiresAt, permissions: [] });
    });

    it('redeemHandoff refuses, and spends, a code whose session was revoked or expired since issuance', async () => {
      const now = Date.now();
      const cases = [
        {
          name: 'revoked',
          end: (session: SessionRecord) => store.revokeSession(session.tokenHash, now),
        },
        {
          name: 'all sessions revoked',
          end: (session: SessionRecord) => store.revokeUserSessions(session.userId, now),
        },
      ];
      for (const { end } of cases) {
        const transaction = await consumedTransaction(now);
        const session = newSession(now);
        await store.createSession(session);
        const handoff = handoffOf(transaction, session, now);
        await store.issueHandoff(handoff);
        await end(session);
        await expect(store.redeemHandoff(keyOf(handoff), now, presenterOf(handoff))).resolves.toBe(
          undefined,
        );
      }

      // Expired: redeemed at the session's expiry (the handoff itself still pending).
      const transaction = await consumedTransaction(now);
      const session = newSession(now, { expiresAt: now + 30_000 });
      await store.createSession(session);
      const handoff = handoffOf(transaction, session, now);
      await store.issueHandoff(handoff);
      await expect(
        store.redeemHandoff(keyOf(handoff), session.expiresAt, presenterOf(handoff)),
      ).resolves.toBe(undefined);
      // The refusal spent the code.
      await expect(store.redeemHandoff(keyOf(handoff), now, presenterOf(handoff))).resolves.toBe(
        undefined,
      );
    });

    it(`${CONCURRENT_CALLS} concurrent redeems of a code naming its session: exactly one redeems it, every other call answers undefined (spec 2.9: atomically single use)`, async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const session = newSession(now);
      await store.createSession(session);
      const handoff = handoffOf(transaction, session, now);
      await store.issueHandoff(handoff);

      const results = await spread((peer) =>
        peer.redeemHandoff(keyOf(handoff), now, presenterOf(handoff)),
      );
      expect(results.filter((result) => result !== undefined)).toEqual([
        { ...handoff, session: { expiresAt: session.expiresAt, permissions: session.permissions } },
      ]);
    });
  });

  describe('a used code and the caller deadline (spec 2.9, 3.2, 4.4)', () => {
    /** A pending handoff naming a live session, and the answer its redeem gives. */
    async function issuedWithSession(now: number) {
      const transaction = await consumedTransaction(now);
      const session = newSession(now);
      await store.createSession(session);
      const handoff = handoffOf(transaction, session, now);
      await store.issueHandoff(handoff);
      const answer = {
        ...handoff,
        session: { expiresAt: session.expiresAt, permissions: session.permissions },
      };
      return { handoff, session, answer, presenter: presenterOf(handoff) };
    }

    // Spec 2.9: "Atomically single-use"; 3.2: "used or expired | exchange | any | 404"; 4.4:
    // "invalid, expired, used or wrong-platform code: 404".
    it("answers a used code undefined to its own presenter, at once and until the handoff's expiry, and to every other", async () => {
      const now = Date.now();
      const { handoff, answer, presenter } = await issuedWithSession(now);

      await expect(store.redeemHandoff(keyOf(handoff), now, presenter)).resolves.toEqual(answer);
      for (const at of [now, now + 1_000, handoff.expiresAt - 1]) {
        await expect(store.redeemHandoff(keyOf(handoff), at, presenter)).resolves.toBe(undefined);
      }
      for (const stranger of [
        { ...presenter, platformKey: `${presenter.platformKey}_OTHER` },
        { ...presenter, callbackUrl: `${presenter.callbackUrl}/other` },
      ]) {
        await expect(store.redeemHandoff(keyOf(handoff), now, stranger)).resolves.toBe(undefined);
      }
    });

    it('finds a handoff only with the session its code carries: another or none answers undefined and leaves it pending', async () => {
      const now = Date.now();
      const { handoff, answer, presenter } = await issuedWithSession(now);
      const tag = handoff.codeHash.slice(0, 8);

      for (const other of [
        { codeHash: handoff.codeHash },
        { codeHash: handoff.codeHash, sessionTokenHash: `${tag}.${'A'.repeat(43)}` },
      ]) {
        await expect(store.redeemHandoff(other, now, presenter)).resolves.toBe(undefined);
      }
      await expect(store.redeemHandoff(keyOf(handoff), now, presenter)).resolves.toEqual(answer);
    });

    it("answers too_late and changes nothing once the caller's deadline has passed by the store's clock; a redeem in time then redeems, and a late one after it still changes nothing", async () => {
      const now = Date.now();
      const { handoff, answer, presenter } = await issuedWithSession(now);
      const passed = () => Date.now() - MINUTE;
      const ahead = () => Date.now() + MINUTE;

      await expect(store.redeemHandoff(keyOf(handoff), now, presenter, passed())).resolves.toBe(
        'too_late',
      );
      await expect(store.redeemHandoff(keyOf(handoff), now, presenter, ahead())).resolves.toEqual(
        answer,
      );
      await expect(store.redeemHandoff(keyOf(handoff), now, presenter, passed())).resolves.toBe(
        'too_late',
      );
      await expect(store.redeemHandoff(keyOf(handoff), now, presenter, ahead())).resolves.toBe(
        undefined,
      );

      // A handoff naming no session is not spent by a late redeem either.
      const transaction = await consumedTransaction(now);
      const single = newHandoff(transaction, now);
      await store.issueHandoff(single);
      await expect(
        store.redeemHandoff(keyOf(single), now, presenterOf(single), passed()),
      ).resolves.toBe('too_late');
      await expect(
        store.redeemHandoff(keyOf(single), now, presenterOf(single), ahead()),
      ).resolves.toEqual(single);
    });
  });

  describe('createBoundSession: the callback writes in one step (spec 4.2 steps 4, 7, 8)', () => {
    const keepUntil = (now: number) => now + 60 * MINUTE;

    it('binds the transaction and saves the session; the transaction reads bound and extended, the session live', async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const session = newSession(now, {
        tokenHash: hashIn(transaction),
        snapshot: newSessionSnapshot(),
      });

      await expect(
        store.createBoundSession({
          transactionId: transaction.id,
          keepUntil: keepUntil(now),
          session,
        }),
      ).resolves.toBe('bound');
      await expect(store.getSession(session.tokenHash, now)).resolves.toEqual(session);
      await expect(store.getTransaction(transaction.id)).resolves.toEqual({
        ...transaction,
        userId: session.userId,
        sessionId: session.id,
        expiresAt: keepUntil(now),
      });
      // A session saved this way is indexed for its user like any other.
      await expect(store.revokeUserSessions(session.userId, now)).resolves.toBe(1);
    });

    it('with a handoff: the code redeems with its session, and a second issue for the transaction conflicts', async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const session = newSession(now, { tokenHash: hashIn(transaction) });
      const handoff = handoffOf(transaction, session, now);

      await expect(
        store.createBoundSession({
          transactionId: transaction.id,
          keepUntil: keepUntil(now),
          session,
          handoff,
        }),
      ).resolves.toBe('bound');
      await expect(store.issueHandoff(newHandoff(transaction, now))).resolves.toBe('conflict');
      await expect(store.redeemHandoff(keyOf(handoff), now, presenterOf(handoff))).resolves.toEqual(
        {
          ...handoff,
          session: { expiresAt: session.expiresAt, permissions: session.permissions },
        },
      );
    });

    it('writes nothing when the transaction is already bound, unknown, unconsumed or expired', async () => {
      const now = Date.now();
      const bound = await consumedTransaction(now);
      await store.bindTransaction(bound.id, {
        userId: randomUUID(),
        sessionId: randomUUID(),
        keepUntil: keepUntil(now),
      });
      const unconsumed = newTransaction(now);
      await store.createTransaction(unconsumed);
      const shortLived = newTransaction(now, { expiresAt: now + 300 });
      await store.createTransaction(shortLived);
      await store.consumeTransaction(stateOf(shortLived), now);
      await sleep(shortLived.expiresAt - Date.now() + 50);

      const cases: Array<[TransactionRecord | undefined, string]> = [
        [bound, 'already_bound'],
        [undefined, 'not_found'],
        [unconsumed, 'not_found'],
        [shortLived, 'not_found'],
      ];
      for (const [transaction, expected] of cases) {
        const transactionId = transaction?.id ?? randomUUID();
        const session = newSession(now, { tokenHash: hashIn(transactionId) });
        const handoff = newHandoff(transaction ?? newTransaction(now, { id: transactionId }), now, {
          userId: session.userId,
          sessionId: session.id,
          sessionTokenHash: session.tokenHash,
        });
        await expect(
          store.createBoundSession({ transactionId, keepUntil: keepUntil(now), session, handoff }),
        ).resolves.toBe(expected);
        await expect(store.getSession(session.tokenHash, now)).resolves.toBe(undefined);
        await expect(store.redeemHandoff(keyOf(handoff), now, presenterOf(handoff))).resolves.toBe(
          undefined,
        );
      }
      expect((await store.getTransaction(unconsumed.id))?.userId).toBe(null);
    });

    it('answers conflict and writes nothing when a handoff was already issued for the transaction', async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const earlier = newHandoff(transaction, now);
      await expect(store.issueHandoff(earlier)).resolves.toBe('issued');
      const session = newSession(now, { tokenHash: hashIn(transaction) });

      await expect(
        store.createBoundSession({
          transactionId: transaction.id,
          keepUntil: keepUntil(now),
          session,
          handoff: handoffOf(transaction, session, now),
        }),
      ).resolves.toBe('conflict');
      await expect(store.getSession(session.tokenHash, now)).resolves.toBe(undefined);
      expect((await store.getTransaction(transaction.id))?.userId).toBe(null);
      // Without a handoff the same transaction still binds.
      await expect(
        store.createBoundSession({
          transactionId: transaction.id,
          keepUntil: keepUntil(now),
          session,
        }),
      ).resolves.toBe('bound');
    });

    it('rejects, writing nothing, a session token hash or handoff code hash that exists already', async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const existing = newSession(now, { tokenHash: hashIn(transaction) });
      await store.createSession(existing);
      const session = newSession(now, { tokenHash: existing.tokenHash });
      await expect(
        store.createBoundSession({
          transactionId: transaction.id,
          keepUntil: keepUntil(now),
          session,
        }),
      ).rejects.toThrow();
      expect((await store.getTransaction(transaction.id))?.userId).toBe(null);
      await expect(store.getSession(existing.tokenHash, now)).resolves.toEqual(existing);

      const other = await consumedTransaction(now);
      const pending = newHandoff(other, now);
      await store.issueHandoff(pending);
      const fresh = newSession(now, { tokenHash: hashIn(transaction) });
      await expect(
        store.createBoundSession({
          transactionId: transaction.id,
          keepUntil: keepUntil(now),
          session: fresh,
          handoff: { ...handoffOf(transaction, fresh, now), codeHash: pending.codeHash },
        }),
      ).rejects.toThrow();
      expect((await store.getTransaction(transaction.id))?.userId).toBe(null);
      await expect(store.getSession(fresh.tokenHash, now)).resolves.toBe(undefined);
      await expect(store.redeemHandoff(keyOf(pending), now, presenterOf(pending))).resolves.toEqual(
        pending,
      );
    });

    it('refuses a handoff of another transaction or session (TypeError)', async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const session = newSession(now, { tokenHash: hashIn(transaction) });
      await expect(
        store.createBoundSession({
          transactionId: transaction.id,
          keepUntil: keepUntil(now),
          session,
          handoff: handoffOf(transaction, newSession(now, { tokenHash: hashIn(transaction) }), now),
        }),
      ).rejects.toThrow(TypeError);
      expect((await store.getTransaction(transaction.id))?.userId).toBe(null);
    });

    it(`${CONCURRENT_CALLS} concurrent calls for one transaction, each with its own session and handoff: exactly one binds, and only its session and code exist`, async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      const attempts = Array.from({ length: CONCURRENT_CALLS }, () => {
        const session = newSession(now, { tokenHash: hashIn(transaction), userId: randomUUID() });
        return { session, handoff: handoffOf(transaction, session, now) };
      });
      let next = 0;
      const results = await spread((peer) => {
        const attempt = attempts[next++];
        if (!attempt) throw new Error('no attempt');
        return peer.createBoundSession({
          transactionId: transaction.id,
          keepUntil: keepUntil(now),
          ...attempt,
        });
      });
      expect(results.filter((result) => result === 'bound')).toHaveLength(1);
      expect(results.filter((result) => result === 'already_bound')).toHaveLength(
        CONCURRENT_CALLS - 1,
      );
      const winner = attempts[results.indexOf('bound')];
      if (!winner) throw new Error('no winner');
      expect((await store.getTransaction(transaction.id))?.sessionId).toBe(winner.session.id);
      for (const attempt of attempts) {
        const live = await store.getSession(attempt.session.tokenHash, now);
        expect(live?.id).toBe(attempt === winner ? winner.session.id : undefined);
      }
      for (const attempt of attempts.filter((a) => a !== winner).slice(0, 5)) {
        await expect(
          store.redeemHandoff(keyOf(attempt.handoff), now, presenterOf(attempt.handoff)),
        ).resolves.toBe(undefined);
      }
      expect(
        (
          await redeemed(
            store.redeemHandoff(keyOf(winner.handoff), now, presenterOf(winner.handoff)),
          )
        )?.codeHash,
      ).toBe(winner.handoff.codeHash);
    });

    it(`${CONCURRENT_CALLS} concurrent createBoundSession and issueHandoff calls for one transaction: exactly one handoff is issued`, async () => {
      const now = Date.now();
      const transaction = await consumedTransaction(now);
      let next = 0;
      const results = await spread((peer) => {
        const index = next++;
        const session = newSession(now, { tokenHash: hashIn(transaction) });
        const handoff = handoffOf(transaction, session, now);
        return index % 2 === 0
          ? peer.createBoundSession({
              transactionId: transaction.id,
              keepUntil: keepUntil(now),
              session,
              handoff,
            })
          : peer.issueHandoff(handoff);
      });
      const winners = results.filter((result) => result === 'bound' || result === 'issued');
      expect(winners).toHaveLength(1);
    });
  });

  describe('records with non-uuid ids', () => {
    it('are refused by every create method', async () => {
      const now = Date.now();
      await expect(store.createTransaction(newTransaction(now, { id: 'tx-1' }))).rejects.toThrow(
        TypeError,
      );
      await expect(store.createSession(newSession(now, { userId: 'user-1' }))).rejects.toThrow(
        TypeError,
      );
      const transaction = newTransaction(now);
      await expect(
        store.issueHandoff(newHandoff(transaction, now, { transactionId: 'tx-1' })),
      ).rejects.toThrow(TypeError);
    });
  });

  it('ping resolves while the store answers', async () => {
    await expect(store.ping()).resolves.toBe(undefined);
  });
});
