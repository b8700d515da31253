import { randomUUID } from 'node:crypto';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { createDatabase, migrateSchema, type Database } from '@gateway/db';
import { createTestDatabase, waitFor, type TestDatabase } from '@gateway/testkit';
import { authFlowMigrations } from './authflow-migrations.js';
import { USER_STATUS_CHANNEL } from './migrations/0003-notify-user-status.js';
import { createUserStatusWatch, isUserActive, type UserStatusWatch } from './user-status-watch.js';
import { provisionUser, type IdentityClaims } from './users.js';

const LISTENING_BACKENDS = `select pid from pg_stat_activity
  where application_name = 'gateway listen authflow_user_status' and datname = current_database()`;

type Engine = { name: string; open(): Promise<Database> };

let testDatabase: TestDatabase;
const opened: Database[] = [];
const watches: UserStatusWatch[] = [];

beforeAll(async () => {
  testDatabase = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(watches.map((watch) => watch.close()));
  await Promise.all(opened.map((db) => db.close()));
  await testDatabase.drop();
});

async function migrated(db: Database): Promise<Database> {
  opened.push(db);
  await migrateSchema(db, authFlowMigrations);
  return db;
}

const engines: Engine[] = [
  {
    name: 'PostgreSQL',
    open: async () => migrated(await createDatabase({ url: testDatabase.url })),
  },
  { name: 'PGlite', open: async () => migrated(await createDatabase({ inMemory: true })) },
];

function watch(db: Database, options: Parameters<typeof createUserStatusWatch>[1] = {}) {
  const created = createUserStatusWatch(db, options);
  watches.push(created);
  return created;
}

const until = (what: string, check: () => boolean, timeoutMs = 5_000) =>
  waitFor(() => Promise.resolve(check()), { timeoutMs, intervalMs: 5, what });

async function addUser(db: Database, status = 'ACTIVE'): Promise<string> {
  const id = randomUUID();
  const now = new Date();
  await db.knex('authflow.users').insert({
    id,
    issuer: 'https://id.example',
    subject: id,
    environment_key: 'PROD',
    status,
    created_at: now,
    updated_at: now,
  });
  return id;
}

const setStatus = (db: Database, id: string, status: string) =>
  db.knex('authflow.users').where({ id }).update({ status, updated_at: new Date() });

describe.each(engines)('user-status watch on $name', (engine) => {
  let db: Database;
  let live: UserStatusWatch;
  beforeAll(async () => {
    db = await engine.open();
  });

  it('answers unknown until live, then loads the users who are not ACTIVE', async () => {
    const active = await addUser(db);
    const suspended = await addUser(db, 'SUSPENDED');
    const softDeleted = await addUser(db, 'SOFT_DELETED');
    const removed = await addUser(db);
    await db.knex('authflow.users').where({ id: removed }).del();

    live = watch(db);
    expect(live.status(suspended)).toBe('unknown');
    await until('the watch to be live', () => live.live);
    expect(live.status(active)).toBe('active');
    expect(live.status(suspended)).toBe('inactive');
    expect(live.status(softDeleted)).toBe('inactive');
    expect(live.status(removed)).toBe('inactive');
  });

  it('follows direct SQL: suspended, soft-deleted, reactivated, deleted, inserted again', async () => {
    const id = await addUser(db);
    const row = (await db.knex('authflow.users').where({ id }).first()) as Record<string, unknown>;
    const follows = async (change: () => Promise<unknown>, expected: 'active' | 'inactive') => {
      await change();
      // PGlite delivers before the committing query resolves. On PostgreSQL the watch says
      // unknown until it has caught up with a write through its own Database; never stale.
      if (engine.name === 'PGlite') expect(live.status(id)).toBe(expected);
      else expect([expected, 'unknown']).toContain(live.status(id));
      await until(`${id} ${expected}`, () => live.status(id) === expected, 2_000);
    };
    await until(`${id} active`, () => live.status(id) === 'active');
    await follows(() => setStatus(db, id, 'SUSPENDED'), 'inactive');
    await follows(() => setStatus(db, id, 'ACTIVE'), 'active');
    await follows(() => setStatus(db, id, 'SOFT_DELETED'), 'inactive');
    await follows(() => setStatus(db, id, 'ACTIVE'), 'active');
    await follows(() => db.knex('authflow.users').where({ id }).del(), 'inactive');
    await follows(() => db.knex('authflow.users').insert(row), 'active');
    // A change inside a transaction counts only once committed, and not at all if rolled back.
    await db.knex
      .transaction(async (trx) => {
        await trx('authflow.users').where({ id }).update({ status: 'SUSPENDED' });
        throw new Error('roll back');
      })
      .catch(() => undefined);
    // Notifications come in commit order: once a later change is heard, so would it have been.
    const marker = await addUser(db);
    await setStatus(db, marker, 'SUSPENDED');
    await until('the later change', () => live.status(marker) === 'inactive');
    expect(live.status(id)).toBe('active');
    expect(live.live).toBe(true);
  });

  it('lets isUserActive read the row only while the watch is not live', async () => {
    const suspended = await addUser(db, 'SUSPENDED');
    const active = await addUser(db);
    await until('the suspension', () => live.status(suspended) === 'inactive');
    let reads = 0;
    const readStatus = (id: string) => async () => {
      reads += 1;
      const row = (await db.knex('authflow.users').where({ id }).first()) as
        { status: string } | undefined;
      return row?.status;
    };
    expect(await isUserActive(live, active, readStatus(active))).toBe(true);
    expect(await isUserActive(live, suspended, readStatus(suspended))).toBe(false);
    expect(reads).toBe(0);
    expect(await isUserActive(undefined, active, readStatus(active))).toBe(true);
    expect(await isUserActive(undefined, suspended, readStatus(suspended))).toBe(false);
    expect(await isUserActive(undefined, randomUUID(), readStatus(randomUUID()))).toBe(false);
    expect(reads).toBe(3);
  });

  it('answers unknown once closed', async () => {
    const suspended = await addUser(db, 'SUSPENDED');
    await until('the suspension', () => live.status(suspended) === 'inactive');
    await live.close();
    expect(live.live).toBe(false);
    expect(live.status(suspended)).toBe('unknown');
    await live.close();
  });

  it('stays unknown while a trigger is disabled', async () => {
    const errors: unknown[] = [];
    await db.knex.raw('alter table authflow.users disable trigger users_status_updated');
    const blind = watch(db, { onError: (error) => errors.push(error), retryMinMs: 50 });
    try {
      await until('a refusal', () => errors.length > 0);
      expect(String(errors[0])).toMatch(/triggers .* missing or disabled/);
      expect(blind.live).toBe(false);
    } finally {
      await db.knex.raw('alter table authflow.users enable trigger users_status_updated');
    }
    await until('the watch to be live', () => blind.live);
    await blind.close();
  });
});

describe('user-status watch when its PostgreSQL connection goes', () => {
  let db: Database;
  beforeAll(async () => {
    db = await engines[0]!.open();
  });

  async function terminateListeners(): Promise<number> {
    const { rows } = (await db.knex.raw(
      `select pg_terminate_backend(pid) as done from (${LISTENING_BACKENDS}) listening`,
    )) as { rows: unknown[] };
    return rows.length;
  }

  it('answers unknown when the listening backend is terminated, then reloads and goes live again', async () => {
    const errors: unknown[] = [];
    // The pause before reconnecting leaves time to change a status while nobody listens.
    const watched = watch(db, { onError: (error) => errors.push(error), retryMinMs: 1_000 });
    const suspended = await addUser(db, 'SUSPENDED');
    const active = await addUser(db);
    await until('the watch to be live', () => watched.live);
    expect(watched.status(suspended)).toBe('inactive');

    expect(await terminateListeners()).toBe(1);
    await until('the watch to notice', () => !watched.live);
    expect(watched.status(suspended)).toBe('unknown');
    expect(watched.status(active)).toBe('unknown');
    await until('the loss to be reported', () => errors.length > 0);

    // Changed while down: no notification reaches anyone, only the reload can tell.
    await setStatus(db, active, 'SUSPENDED');
    await setStatus(db, suspended, 'ACTIVE');
    expect(watched.live).toBe(false);

    await until('the watch to be live again', () => watched.live, 10_000);
    expect(watched.status(active)).toBe('inactive');
    expect(watched.status(suspended)).toBe('active');
    await setStatus(db, active, 'ACTIVE');
    await until('the reactivation', () => watched.status(active) === 'active');
    await watched.close();
  });

  it('never answers stale right after a write through its own Database returns', async () => {
    const watched = watch(db);
    const id = await addUser(db);
    await until('the watch to be live', () => watched.live);
    const readStatus = async () =>
      ((await db.knex('authflow.users').where({ id }).first()) as { status: string }).status;
    for (let i = 0; i < 100; i++) {
      const status = i % 2 === 0 ? 'SUSPENDED' : 'ACTIVE';
      const expected = status === 'ACTIVE' ? 'active' : 'inactive';
      await setStatus(db, id, status);
      // Until it has caught up with the write the watch says unknown, so callers read the row.
      expect([expected, 'unknown']).toContain(watched.status(id));
      expect(await isUserActive(watched, id, readStatus)).toBe(status === 'ACTIVE');
    }
    await until('the watch to catch up', () => watched.live);
    expect(watched.status(id)).toBe('active');
    await watched.close();
  });

  it('sends no fence after a login, which changes no status, and still fences a status change through the same Database', async () => {
    // What the watch sends on its listening connection: after the load, only fences.
    const sent: string[] = [];
    const spied = new Proxy(db, {
      get(target, property) {
        if (property === 'listen') {
          return async (...args: Parameters<Database['listen']>) => {
            const listener = await target.listen(...args);
            return new Proxy(listener, {
              get(inner, key) {
                if (key === 'query') {
                  return (sql: string) => {
                    sent.push(sql);
                    return inner.query(sql);
                  };
                }
                return Reflect.get(inner, key, inner);
              },
            });
          };
        }
        return Reflect.get(target, property, target);
      },
    });
    const watched = watch(spied);
    const suspended = await addUser(db, 'SUSPENDED');
    await until('the watch to be live', () => watched.live);
    await until('the suspended user', () => watched.status(suspended) === 'inactive');
    // Every notification from now on, heard by another process.
    const other = await createDatabase({ url: testDatabase.url });
    opened.push(other);
    const heard: string[] = [];
    const otherListener = await other.listen(USER_STATUS_CHANNEL, (payload) => heard.push(payload));
    const fences = () => sent.filter((sql) => sql === 'select 1').length;
    const before = fences();

    const claims = (subject: string): IdentityClaims => ({
      issuer: 'https://id.example',
      subject,
      environmentKey: 'PROD',
      email: 'ada@example.com',
      emailVerified: true,
      picture: undefined,
      name: 'Ada',
    });
    const subject = randomUUID();
    const first = await provisionUser(db.knex, claims(subject), new Date());
    expect(watched.live).toBe(true);
    await provisionUser(db.knex, claims(subject), new Date());
    expect(watched.live).toBe(true);
    await expect(provisionUser(db.knex, claims(suspended), new Date())).rejects.toMatchObject({
      code: 'ACCOUNT_INACTIVE',
    });
    expect(watched.live).toBe(true);
    expect(watched.status(first.user.id)).toBe('active');
    expect(fences()).toBe(before);

    // A status change through the same Database still fences, and is never answered stale.
    await setStatus(db, first.user.id, 'SUSPENDED');
    expect(fences()).toBe(before + 1);
    expect(['inactive', 'unknown']).toContain(watched.status(first.user.id));
    await until('the suspension', () => watched.status(first.user.id) === 'inactive');
    // The logins notified nothing: the suspension (committed after them) is all that was heard.
    await until('a notification', () => heard.length > 0, 2_000);
    expect(heard.map((payload) => (JSON.parse(payload) as { id: string }).id)).toEqual([
      first.user.id,
    ]);
    await otherListener.close();
    await watched.close();
  });

  it('follows changes made through another Database (another process) by notifications alone', async () => {
    const other = await createDatabase({ url: testDatabase.url });
    opened.push(other);
    const watched = watch(db);
    const id = await addUser(other);
    await until('the watch to be live', () => watched.live);
    await setStatus(other, id, 'SUSPENDED');
    await until('the suspension', () => watched.status(id) === 'inactive', 2_000);
    await other.knex('authflow.users').where({ id }).del();
    await setStatus(other, await addUser(other), 'SOFT_DELETED');
    await until('the delete', () => watched.status(id) === 'inactive', 2_000);
    expect(watched.live).toBe(true);
    await watched.close();
  });

  it('holds one connection of its own, and none once closed', async () => {
    const listening = async () =>
      ((await db.knex.raw(LISTENING_BACKENDS)) as { rows: unknown[] }).rows.length;
    const watched = watch(db);
    await until('the watch to be live', () => watched.live);
    expect(await listening()).toBe(1);
    await watched.close();
    await waitFor(async () => (await listening()) === 0, {
      timeoutMs: 30_000,
      intervalMs: 20,
      what: 'the listening connection to close',
    });
  });

  it('stops when its database is closed', async () => {
    const own = await createDatabase({ url: testDatabase.url });
    const errors: unknown[] = [];
    const watched = watch(own, { onError: (error) => errors.push(error), retryMinMs: 20 });
    await until('the watch to be live', () => watched.live);
    await own.close();
    await until('the watch to stop', () => !watched.live);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(errors).toEqual([]);
    await watched.close();
  });
});
