// Spec 2.5, 2.6 and 3.8: JIT provisioning of local users, on real PostgreSQL and on PGlite.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDatabase, migrateSchema, type Database } from '@gateway/db';
import { GatewayError } from '@gateway/errors';
import { createTestDatabase } from '@gateway/testkit';
import { randomUUID } from 'node:crypto';
import { authFlowMigrations } from './authflow-migrations.js';
import {
  grantRole,
  PLATFORM_ADMIN,
  PLATFORM_ADMIN_PERMISSIONS,
  permissionsOf,
  provisionUser,
  userStatus,
  type IdentityClaims,
  type UserRow,
} from './users.js';

const engines = [
  {
    name: 'PostgreSQL',
    open: async () => {
      const testDatabase = await createTestDatabase();
      const db = await createDatabase({ url: testDatabase.url, poolMax: 20 });
      return { db, drop: () => testDatabase.drop() };
    },
  },
  {
    name: 'PGlite',
    open: async () => ({ db: await createDatabase({ inMemory: true }), drop: async () => {} }),
  },
];

describe.each(engines)('provisionUser on $name', (engine) => {
  let db: Database;
  let drop: () => Promise<void>;
  const statements: string[] = [];

  beforeAll(async () => {
    ({ db, drop } = await engine.open());
    await migrateSchema(db, authFlowMigrations);
    db.knex.on('query', (query: { sql: string }) => statements.push(query.sql));
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  const claims = (overrides: Partial<IdentityClaims> = {}): IdentityClaims => ({
    issuer: 'https://id.example.com',
    subject: randomUUID(),
    environmentKey: 'PROD',
    email: 'first@example.com',
    emailVerified: false,
    picture: 'https://cdn.example.com/a.png',
    name: 'Ada',
    ...overrides,
  });

  const rowOf = async (id: string) =>
    (await db.knex('authflow.users').where({ id }).first()) as UserRow | undefined;

  it('creates the user at the first login and updates e-mail, verification and last login at the next, in one statement each', async () => {
    const first = claims();
    statements.length = 0;
    const created = await provisionUser(db.knex, first, new Date('2026-01-01T00:00:00Z'));
    expect(statements).toHaveLength(1);
    expect(created.platformAdmin).toBe(false);
    expect(created.user).toMatchObject({
      issuer: first.issuer,
      subject: first.subject,
      environment_key: 'PROD',
      email: 'first@example.com',
      email_verified: false,
      status: 'ACTIVE',
      picture: 'https://cdn.example.com/a.png',
      name: 'Ada',
    });
    expect(created.user).not.toHaveProperty('provisioned');
    expect(created.user).not.toHaveProperty('platform_admin');

    statements.length = 0;
    const later = new Date('2026-01-02T00:00:00Z');
    const again = await provisionUser(
      db.knex,
      { ...first, email: 'second@example.com', emailVerified: true, picture: 'http://plain/a.png' },
      later,
    );
    expect(statements).toHaveLength(1);
    expect(again.user.id).toBe(created.user.id);
    expect(again.user).toMatchObject({
      email: 'second@example.com',
      email_verified: true,
      // Spec 2.5: only HTTPS pictures are kept.
      picture: null,
      last_login_at: later,
    });
    expect(again.user.created_at).toEqual(created.user.created_at);
  });

  it('answers the platform_admin role in the same statement (spec 2.6)', async () => {
    const identity = claims();
    const { user } = await provisionUser(db.knex, identity, new Date());
    await grantRole(db.knex, user.id, PLATFORM_ADMIN, 'test', new Date());
    statements.length = 0;
    const next = await provisionUser(db.knex, identity, new Date());
    expect(statements).toHaveLength(1);
    expect(next.platformAdmin).toBe(true);
    expect(permissionsOf(next.platformAdmin, true)).toEqual([...PLATFORM_ADMIN_PERMISSIONS]);
    // Spec 2.6: never outside the deployment environment.
    expect(permissionsOf(next.platformAdmin, false)).toEqual([]);
  });

  it('refuses a soft-deleted or suspended user without changing the row (spec 3.8)', async () => {
    for (const [status, code] of [
      ['SOFT_DELETED', 'ACCOUNT_DELETED'],
      ['SUSPENDED', 'ACCOUNT_INACTIVE'],
    ] as const) {
      const identity = claims();
      const { user } = await provisionUser(db.knex, identity, new Date());
      await db.knex('authflow.users').where({ id: user.id }).update({ status });
      const before = await rowOf(user.id);

      const refused = await provisionUser(
        db.knex,
        { ...identity, email: 'changed@example.com' },
        new Date(Date.now() + 60_000),
      ).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(GatewayError);
      expect((refused as GatewayError).code).toBe(code);
      expect(await rowOf(user.id)).toEqual(before);
    }
  });

  it('gives concurrent first logins of one identity one user', async () => {
    const identity = claims();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => provisionUser(db.knex, identity, new Date())),
    );
    expect(new Set(results.map((result) => result.user.id)).size).toBe(1);
    const rows = await db
      .knex('authflow.users')
      .where({ issuer: identity.issuer, subject: identity.subject });
    expect(rows).toHaveLength(1);
  });

  it('userStatus reads the status by primary key, undefined for an unknown user', async () => {
    const { user } = await provisionUser(db.knex, claims(), new Date());
    statements.length = 0;
    await expect(userStatus(db.knex, user.id)).resolves.toBe('ACTIVE');
    expect(statements).toHaveLength(1);
    await db.knex('authflow.users').where({ id: user.id }).update({ status: 'SUSPENDED' });
    await expect(userStatus(db.knex, user.id)).resolves.toBe('SUSPENDED');
    await expect(userStatus(db.knex, randomUUID())).resolves.toBe(undefined);
  });
});
