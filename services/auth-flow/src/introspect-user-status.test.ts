// With the user-status watch live an introspection runs no PostgreSQL statement and
// still sees status changes written directly in SQL (spec 3.8 has no API for SUSPENDED) at the
// very next call; while the watch is not live it reads the status row as before. The registry
// and onboarding services answer nothing here: an introspection must not call them.
import { randomUUID } from 'node:crypto';
import { createRouterTransport } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RegistryService } from '@gateway/contracts';
import { hashToken, randomToken } from '@gateway/crypto';
import { createDatabase, migrateSchema, type Database } from '@gateway/db';
import { createTestDatabase, waitFor, type TestDatabase } from '@gateway/testkit';
import type { AuthFlowDeps } from './auth-flow-deps.js';
import { authFlowMigrations } from './authflow-migrations.js';
import { createSessionHandoff } from './session-handoff.js';
import type { AuthFlowStore } from './store/auth-flow-store.js';
import { createSqlAuthFlowStore } from './store/sql-auth-flow-store.js';
import { testAuthFlowDeps } from './testing/test-deps.js';
import { newSession, newSessionSnapshot } from './store/testing/fixtures.js';
import { openRedisStore, type RedisStoreHandle } from './store/testing/store-harness.js';
import { createUserStatusWatch, type UserStatusWatch } from './user-status-watch.js';

let testDatabase: TestDatabase;
let redis: RedisStoreHandle;
const databases: Database[] = [];

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  redis = await openRedisStore();
});
afterAll(async () => {
  await Promise.all(databases.map((db) => db.close()));
  await redis?.close();
  await testDatabase?.drop();
});

async function migrated(db: Database): Promise<Database> {
  databases.push(db);
  await migrateSchema(db, authFlowMigrations);
  return db;
}

const setups: Array<{ name: string; open(): Promise<{ db: Database; store: AuthFlowStore }> }> = [
  {
    name: 'PostgreSQL, sessions in Redis',
    open: async () => ({
      db: await migrated(await createDatabase({ url: testDatabase.url })),
      store: redis.store,
    }),
  },
  {
    name: 'PGlite, sessions in SQL',
    open: async () => {
      const db = await migrated(await createDatabase({ inMemory: true }));
      return { db, store: createSqlAuthFlowStore(db) };
    },
  },
];

/** The registry: every platform is active, and its sessions' policy allows them. */
const registry = createRouterTransport(({ service }) => {
  service(RegistryService, {
    getPlatformSessionPolicy: () => ({
      sessionsAllowed: true,
      sessionsNotBeforeMs: 0n,
      adminConsole: false,
    }),
  });
});

function depsWith(db: Database, store: AuthFlowStore, userStatus: UserStatusWatch): AuthFlowDeps {
  return testAuthFlowDeps({ db, store, userStatus, registry });
}

describe.each(setups)('introspection with the user-status watch on $name', (setup) => {
  let db: Database;
  let store: AuthFlowStore;
  let watch: UserStatusWatch;
  let handoff: ReturnType<typeof createSessionHandoff>;
  /** Statements on authflow.users, in order. */
  const userStatements: string[] = [];

  beforeAll(async () => {
    ({ db, store } = await setup.open());
    db.knex.on('query', (query: { sql: string }) => {
      if (/authflow"?\."?users/.test(query.sql)) userStatements.push(query.sql);
    });
    watch = createUserStatusWatch(db);
    const deps = depsWith(db, store, watch);
    handoff = createSessionHandoff(deps);
    await waitFor(() => Promise.resolve(watch.live), {
      timeoutMs: 30_000,
      intervalMs: 5,
      what: 'the watch to be live',
    });
  });
  afterAll(() => watch.close());

  async function signedIn() {
    const id = randomUUID();
    const now = new Date();
    await db.knex('authflow.users').insert({
      id,
      issuer: 'https://id.example.com',
      subject: id,
      environment_key: 'PROD',
      email: 'someone@example.com',
      email_verified: true,
      status: 'ACTIVE',
      created_at: now,
      updated_at: now,
    });
    const token = randomToken();
    const session = newSession(Date.now(), {
      tokenHash: hashToken(token),
      userId: id,
      platformKey: 'SHOP',
      snapshot: newSessionSnapshot(),
    });
    await store.createSession(session);
    return { id, introspect: () => handoff.introspect({ token, platformKey: 'SHOP' }) };
  }

  const setStatus = (id: string, status: string) =>
    db.knex('authflow.users').where({ id }).update({ status });

  /**
   * PGlite hands the notification over before the writing query resolves. On PostgreSQL the
   * watch answers unknown after a write through its Database until it has caught up (the
   * introspection then reads the row): wait for that before counting statements.
   */
  async function heard(id: string, expected: 'active' | 'inactive') {
    if (db.kind === 'pglite') expect(watch.status(id)).toBe(expected);
    await waitFor(() => Promise.resolve(watch.status(id) === expected), {
      timeoutMs: 30_000,
      intervalMs: 1,
      what: `the watch to hear ${id} ${expected}`,
    });
  }

  it('reads no user row while the watch is live, and sees SQL status changes at the next call', async () => {
    const { id, introspect } = await signedIn();
    // The user's row was just written: live again once the watch has caught up with it.
    await heard(id, 'active');
    userStatements.length = 0;
    const all: string[] = [];
    const record = (query: { sql: string }) => all.push(query.sql);
    db.knex.on('query', record);
    try {
      expect(await introspect()).toMatchObject({ active: true, user: { id, status: 'ACTIVE' } });
      if (store.kind === 'redis') expect(all).toEqual([]);
      for (const status of ['SUSPENDED', 'SOFT_DELETED']) {
        await setStatus(id, status);
        expect(await introspect()).toEqual({ active: false });
        await heard(id, 'inactive');
        userStatements.length = 0;
        expect(await introspect()).toEqual({ active: false });
      }
      await setStatus(id, 'ACTIVE');
      expect(await introspect()).toMatchObject({ active: true });
      await heard(id, 'active');
      userStatements.length = 0;
      expect(await introspect()).toMatchObject({ active: true });
      await db.knex('authflow.users').where({ id }).del();
      expect(await introspect()).toEqual({ active: false });
      await heard(id, 'inactive');
      userStatements.length = 0;
      expect(await introspect()).toEqual({ active: false });
      expect(userStatements).toEqual([]);
      if (store.kind === 'redis')
        expect(all.filter((sql) => !/authflow"?\."?users/.test(sql))).toEqual([]);
    } finally {
      db.knex.removeListener('query', record);
    }
  });

  it('reads the status row while the watch is not live', async () => {
    const { id, introspect } = await signedIn();
    const closed = createUserStatusWatch(db);
    await closed.close();
    const deps = depsWith(db, store, closed);
    const unwatched = createSessionHandoff(deps);
    const token = await (async () => {
      // The same session, through a handoff whose watch is not live.
      const session = newSession(Date.now(), { userId: id, platformKey: 'SHOP' });
      const value = randomToken();
      await store.createSession({
        ...session,
        tokenHash: hashToken(value),
        snapshot: newSessionSnapshot(),
      });
      return value;
    })();
    userStatements.length = 0;
    expect((await unwatched.introspect({ token, platformKey: 'SHOP' })).active).toBe(true);
    expect(userStatements).toHaveLength(1);
    expect(userStatements[0]).toMatch(/^select status from authflow\.users where id = /);
    await setStatus(id, 'SUSPENDED');
    expect(await unwatched.introspect({ token, platformKey: 'SHOP' })).toEqual({ active: false });
    expect((await introspect()).active).toBe(false);
  });
});
