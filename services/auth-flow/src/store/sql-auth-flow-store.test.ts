// SQL-only parts of the store, on real PostgreSQL and on PGlite: purgeExpired and the
// migration's way down.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { migrateSchema, rollbackSchema } from '@gateway/db';
import { waitFor } from '@gateway/testkit';
import { setTimeout as sleep } from 'node:timers/promises';
import { authFlowMigrations } from '../authflow-migrations.js';
import { createSqlAuthFlowStore } from './sql-auth-flow-store.js';
import type { SqlAuthFlowStore } from './sql-auth-flow-store.js';
import {
  MINUTE,
  keyOf,
  newHandoff,
  newHandoffSnapshot,
  newSession,
  newTransaction,
  presenterOf,
  stateOf,
} from './testing/fixtures.js';
import { sqlFactories } from './testing/store-harness.js';
import type { SqlStoreHandle } from './testing/store-harness.js';

describe.each(sqlFactories)('SQL AuthFlowStore: $name', (factory) => {
  let handle: SqlStoreHandle;
  let store: SqlAuthFlowStore;

  beforeAll(async () => {
    handle = (await factory.open()) as SqlStoreHandle;
    store = handle.store;
  });
  afterAll(async () => {
    await handle?.close();
  });

  /** The store on one knex transaction of the same database. */
  function createSqlStoreOn(knex: SqlStoreHandle['db']['knex']): SqlAuthFlowStore {
    return createSqlAuthFlowStore({ ...handle.db, knex });
  }

  async function count(table: string): Promise<number> {
    const rows: Array<{ n: unknown }> = await handle.db.knex(`authflow.${table}`).count({ n: '*' });
    return Number(rows[0]?.n);
  }

  it('purgeExpired deletes expired transactions, expired or revoked sessions, ended acceptOnce keys, and handoffs only once their transaction expired too', async () => {
    await handle.db.knex('authflow.handoffs').del();
    await handle.db.knex('authflow.transactions').del();
    await handle.db.knex('authflow.sessions').del();
    await handle.db.knex('authflow.accepted_once').del();
    const now = Date.now();

    const expiredTransaction = newTransaction(now - 20 * MINUTE, { expiresAt: now - MINUTE });
    const liveTransaction = newTransaction(now);
    await store.createTransaction(expiredTransaction);
    await store.createTransaction(liveTransaction);
    // The handoff of the live transaction expired; the other's transaction expired as well.
    const spentHandoff = newHandoff(liveTransaction, now - 2 * MINUTE, { expiresAt: now - MINUTE });
    const orphanHandoff = newHandoff(expiredTransaction, now - 2 * MINUTE, {
      expiresAt: now - MINUTE,
    });
    await store.issueHandoff(spentHandoff);
    await store.issueHandoff(orphanHandoff);

    const liveSession = newSession(now);
    const expiredSession = newSession(now - 120 * MINUTE, { expiresAt: now - MINUTE });
    const revokedSession = newSession(now);
    for (const session of [liveSession, expiredSession, revokedSession]) {
      await store.createSession(session);
    }
    await store.revokeSession(revokedSession.tokenHash, now);
    await store.acceptOnce('jti:ended', now - 1, now - 2);
    await store.acceptOnce('jti:live', now + MINUTE, now - 2);

    await expect(store.purgeExpired(now)).resolves.toEqual({
      transactions: 1,
      handoffs: 1,
      sessions: 2,
      acceptedOnce: 1,
    });
    // The key still in force is still refused.
    await expect(store.acceptOnce('jti:live', now + MINUTE, now)).resolves.toBe(false);
    expect(await count('transactions')).toBe(1);
    expect(await count('sessions')).toBe(1);
    await expect(store.getSession(liveSession.tokenHash, now)).resolves.toEqual(liveSession);
    // The kept handoff row still refuses a second issue for its live transaction.
    await expect(store.issueHandoff(newHandoff(liveTransaction, now))).resolves.toBe('conflict');

    // Once the transaction has expired too, everything goes.
    await expect(store.purgeExpired(liveTransaction.expiresAt)).resolves.toEqual({
      transactions: 1,
      handoffs: 1,
      sessions: 0,
      acceptedOnce: 1,
    });
    expect(await count('handoffs')).toBe(0);
  });

  it('acceptOnce deletes the ended keys of others as it runs, and takes over its own ended key', async () => {
    await handle.db.knex('authflow.accepted_once').del();
    const now = Date.now();
    await store.acceptOnce('jti:a', now + MINUTE, now);
    await store.acceptOnce('jti:b', now + MINUTE, now);
    expect(await count('accepted_once')).toBe(2);
    // A minute on, both have ended: the next call deletes the other's row and retakes its own.
    await expect(store.acceptOnce('jti:a', now + 2 * MINUTE, now + MINUTE)).resolves.toBe(true);
    expect(await count('accepted_once')).toBe(1);
    await expect(store.acceptOnce('jti:a', now + 2 * MINUTE, now + MINUTE)).resolves.toBe(false);
  });

  it('a redeemed handoff keeps no sealed session token (spec 2.9: encrypted at rest while pending); the first redeem time stays', async () => {
    const now = Date.now();
    const transaction = newTransaction(now);
    await store.createTransaction(transaction);
    const session = newSession(now);
    await store.createSession(session);
    const handoff = newHandoff(transaction, now, {
      userId: session.userId,
      sessionId: session.id,
      sessionTokenHash: session.tokenHash,
      snapshot: newHandoffSnapshot(),
    });
    await store.issueHandoff(handoff);
    const row = async () => {
      const found: { session_token_encrypted: string | null; redeemed_at: Date | null } =
        await handle.db.knex('authflow.handoffs').where({ code_hash: handoff.codeHash }).first();
      return { token: found.session_token_encrypted, redeemedAt: found.redeemed_at?.getTime() };
    };
    await expect(row()).resolves.toEqual({
      token: handoff.sessionTokenEncrypted,
      redeemedAt: undefined,
    });

    await store.redeemHandoff(keyOf(handoff), now, presenterOf(handoff));
    await store.redeemHandoff(keyOf(handoff), now + 1_000, presenterOf(handoff));
    await expect(row()).resolves.toEqual({ token: null, redeemedAt: now });
  });

  it('a redeemed handoff naming no session keeps no encrypted session token', async () => {
    const now = Date.now();
    const transaction = newTransaction(now);
    await store.createTransaction(transaction);
    const handoff = newHandoff(transaction, now);
    await store.issueHandoff(handoff);
    await store.redeemHandoff(keyOf(handoff), now, presenterOf(handoff));
    const row: { session_token_encrypted: string | null; redeemed_at: Date | null } | undefined =
      await handle.db.knex('authflow.handoffs').where({ code_hash: handoff.codeHash }).first();
    expect(row?.session_token_encrypted).toBe(null);
    expect(row?.redeemed_at?.getTime()).toBe(now);
  });

  // PostgreSQL only: PGlite has one connection, so no second transaction can hold a row
  // meanwhile (the test is not defined there rather than skipped).
  if (factory.name.includes('PostgreSQL')) {
    it('createBoundSession answers conflict, writing nothing, when an issueHandoff for the transaction commits while it runs', async () => {
      const now = Date.now();
      const transaction = newTransaction(now);
      await store.createTransaction(transaction);
      await store.consumeTransaction(stateOf(transaction), now);
      const session = newSession(now);
      const handoff = newHandoff(transaction, now, {
        userId: session.userId,
        sessionId: session.id,
        sessionTokenHash: session.tokenHash,
        snapshot: newHandoffSnapshot(),
      });
      // Another writer has inserted a handoff for the transaction, not yet committed: the
      // statement's snapshot sees none, so it binds, then waits on the unique index.
      const other = await handle.db.knex.transaction();
      try {
        await createSqlStoreOn(other).issueHandoff(newHandoff(transaction, now));
        const racing = store.createBoundSession({
          transactionId: transaction.id,
          keepUntil: now + 60 * MINUTE,
          session,
          handoff,
        });
        await sleep(300);
        await other.commit();
        await expect(racing).resolves.toBe('conflict');
      } finally {
        if (!other.isCompleted()) await other.rollback();
      }
      await expect(store.getSession(session.tokenHash, now)).resolves.toBe(undefined);
      expect((await store.getTransaction(transaction.id))?.userId).toBe(null);
      await expect(store.redeemHandoff(keyOf(handoff), now, presenterOf(handoff))).resolves.toBe(
        undefined,
      );
    });
  }

  // PostgreSQL only, as above: a second connection holds the handoff's row.
  if (factory.name.includes('PostgreSQL')) {
    it("a redeem that waited for the handoff's row past the caller's deadline answers too_late and spends nothing", async () => {
      const now = Date.now();
      const transaction = newTransaction(now);
      await store.createTransaction(transaction);
      const session = newSession(now);
      await store.createSession(session);
      const handoff = newHandoff(transaction, now, {
        userId: session.userId,
        sessionId: session.id,
        sessionTokenHash: session.tokenHash,
        snapshot: newHandoffSnapshot(),
      });
      await store.issueHandoff(handoff);
      const holder = await handle.db.knex.transaction();
      let late: Promise<unknown> | undefined;
      try {
        await holder.raw('select 1 from authflow.handoffs where code_hash = ? for update', [
          handoff.codeHash,
        ]);
        // In time when it starts; the deadline passes while it waits for the row.
        const deadline = Date.now() + 1_000;
        late = store.redeemHandoff(keyOf(handoff), now, presenterOf(handoff), deadline);
        await waitFor(
          async () => {
            const waiting = await handle.db.knex.raw<{ rows: unknown[] }>(
              `select 1 from pg_stat_activity
                where wait_event_type = 'Lock' and query like '%target as materialized%'
                  and pid <> pg_backend_pid()`,
            );
            return waiting.rows.length > 0;
          },
          { timeoutMs: 30_000, intervalMs: 20, what: 'the redeem to wait for the row' },
        );
        await waitFor(
          async () => {
            const clock = await holder.raw<{ rows: Array<{ past: boolean }> }>(
              'select clock_timestamp() >= ?::timestamptz as past',
              [new Date(deadline)],
            );
            return clock.rows[0]?.past === true;
          },
          { timeoutMs: 30_000, intervalMs: 50, what: "the database's clock to pass the deadline" },
        );
        await holder.commit();
        await expect(late).resolves.toBe('too_late');
      } finally {
        if (!holder.isCompleted()) await holder.rollback();
        await late?.catch(() => undefined);
      }
      // Nothing was spent: the next redeem is the first.
      const first = await store.redeemHandoff(keyOf(handoff), now, presenterOf(handoff));
      expect(first).toMatchObject({ codeHash: handoff.codeHash });
    });
  }

  it('the migration rolls back (dropping its tables) and applies again', async () => {
    const ours = '20261201_0001_create_login_flow_tables';
    const tables = async () =>
      handle.db
        .knex('pg_catalog.pg_tables')
        .where({ schemaname: 'authflow' })
        .whereIn('tablename', ['transactions', 'handoffs', 'sessions'])
        .pluck<string[]>('tablename');
    expect(await rollbackSchema(handle.db, authFlowMigrations, { all: true })).toContain(ours);
    expect(await tables()).toEqual([]);
    expect(await migrateSchema(handle.db, authFlowMigrations)).toContain(ours);
    expect((await tables()).sort()).toEqual(['handoffs', 'sessions', 'transactions']);
  });
});
