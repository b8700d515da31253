// Spec 4.3-4.5 on the hot paths, against real PostgreSQL and each real store: what
// the exchange and introspection answer, which session changes they see, and that they read
// nothing else. The registry and onboarding services do not run here: they answer fixed
// values through Connect's in-memory transport, and every call to them is recorded.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRouterTransport } from '@connectrpc/connect';
import { OnboardingService, RegistryService } from '@gateway/contracts';
import { hashToken, randomToken } from '@gateway/crypto';
import { createDatabase, migrateSchema, type Database } from '@gateway/db';
import { GatewayError } from '@gateway/errors';
import { createTestDatabase, type TestDatabase } from '@gateway/testkit';
import { randomUUID } from 'node:crypto';
import type { AuthFlowDeps } from './auth-flow-deps.js';
import { authFlowMigrations } from './authflow-migrations.js';
import { createEnvironmentClients } from './environment-clients.js';
import { createLoginFlow } from './login-flow.js';
import { createSessionHandoff } from './session-handoff.js';
import type { AuthFlowStore, SessionRecord, TransactionRecord } from './store/auth-flow-store.js';
import { createSqlAuthFlowStore } from './store/sql-auth-flow-store.js';
import { MINUTE, newTransaction, stateOf } from './store/testing/fixtures.js';
import { hashCredential } from './store/slot-tags.js';
import { openRedisStore, type RedisStoreHandle } from './store/testing/store-harness.js';
import { testAuthFlowDeps } from './testing/test-deps.js';
import { provisionUser, type UserRow } from './users.js';

const ISSUER = 'https://id.partner.example.com';
const CALLBACK = 'https://shop.example.com/auth/callback';
const ADMIN_PERMISSIONS = ['platforms:admin', 'onboarding:schema:read', 'onboarding:schema:write'];

let testDatabase: TestDatabase;
let db: Database;
let redis: RedisStoreHandle;
/** SQL text of every statement the database ran, in order. */
const statements: string[] = [];
/** Every registry and onboarding call, by method name. */
const calls: string[] = [];
/** What the registry answers as the platform's setting (changed by one case). */
const centralOnboardingEnabled = true;

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  db = await createDatabase({ url: testDatabase.url });
  await migrateSchema(db, authFlowMigrations);
  db.knex.on('query', (query: { sql: string }) => statements.push(query.sql));
  redis = await openRedisStore();
});

afterAll(async () => {
  await redis?.close();
  await db?.close();
  await testDatabase?.drop();
});

const stores: Array<{ name: string; open: () => AuthFlowStore }> = [
  { name: 'SQL on PostgreSQL', open: () => createSqlAuthFlowStore(db) },
  { name: 'Redis', open: () => redis.store },
];

function depsWith(store: AuthFlowStore): AuthFlowDeps {
  const registry = createRouterTransport(({ service }) => {
    service(RegistryService, {
      getPlatform(request) {
        calls.push('getPlatform');
        return {
          platform: { platformKey: request.platformKey, active: true, centralOnboardingEnabled },
        };
      },
      getPlatformSessionPolicy() {
        calls.push('getPlatformSessionPolicy');
        return { sessionsAllowed: true, sessionsNotBeforeMs: 0n, adminConsole: false };
      },
      getEnvironmentClient(request) {
        calls.push('getEnvironmentClient');
        return {
          environmentKey: request.environmentKey,
          issuer: ISSUER,
          tier: 'staging',
          active: true,
          deployment: false,
          clientId: 'gateway',
          clientSecret: 'secret',
        };
      },
    });
  });
  // Spec 2.14: one required platform field is still empty; the global profile is complete.
  const status = {
    globalStatus: 'COMPLETE',
    globalMissingFields: [],
    platformStatus: 'IN_PROGRESS',
    platformMissingFields: ['company'],
    requirementVersion: 4,
  };
  const onboarding = createRouterTransport(({ service }) => {
    service(OnboardingService, {
      bootstrapMembership() {
        calls.push('bootstrapMembership');
        return { status };
      },
      evaluateOnboarding() {
        calls.push('evaluateOnboarding');
        return { status };
      },
    });
  });
  return testAuthFlowDeps({ db, store, registry, onboarding });
}

/** Statements and calls made while `work` runs. */
/** Spec 4.5: the answer for a live session of SHOP's login, in the PARTNER environment. */
function activeIntrospection(user: UserRow, session: SessionRecord) {
  return {
    active: true,
    sessionId: session.id,
    expiresAt: new Date(session.expiresAt).toISOString(),
    platformKey: 'SHOP',
    user: {
      id: user.id,
      issuer: ISSUER,
      subject: user.subject,
      email: user.email,
      emailVerified: true,
      status: 'ACTIVE',
    },
    environment: { key: 'PARTNER', tier: 'staging' },
  };
}

async function counting<T>(work: () => Promise<T>) {
  statements.length = 0;
  calls.length = 0;
  const answer = await work();
  return { answer, statements: [...statements], calls: [...calls] };
}

describe.each(stores)('hot paths on $name', ({ open }) => {
  let store: AuthFlowStore;
  let deps: AuthFlowDeps;
  let login: ReturnType<typeof createLoginFlow>;
  let handoff: ReturnType<typeof createSessionHandoff>;

  beforeAll(() => {
    store = open();
    deps = depsWith(store);
    const environments = createEnvironmentClients(deps.registry);
    login = createLoginFlow(deps, environments);
    handoff = createSessionHandoff(deps);
  });

  async function newUser(): Promise<UserRow> {
    const { user } = await provisionUser(
      db.knex,
      {
        issuer: ISSUER,
        subject: randomUUID(),
        environmentKey: 'PARTNER',
        email: `${randomUUID()}@example.com`,
        emailVerified: true,
        picture: 'https://cdn.example.com/me.png',
        name: undefined,
      },
      new Date(),
    );
    return user;
  }

  /**
   * A login past its callback (spec 4.2): the transaction consumed and bound to the user's new
   * session, as the callback leaves it when onboarding comes first.
   */
  async function signedIn(user: UserRow, options: { permissions?: string[] } = {}) {
    const now = Date.now();
    const transaction: TransactionRecord = newTransaction(now, {
      platformKey: 'SHOP',
      environmentKey: 'PARTNER',
      onboardingMode: 'platform',
      centralOnboardingEnabled: false,
      callbackUrl: CALLBACK,
      returnTo: 'https://shop.example.com/orders',
    });
    await store.createTransaction(transaction);
    await store.consumeTransaction(stateOf(transaction), now);
    const token = randomToken();
    const session: SessionRecord = {
      id: randomUUID(),
      tokenHash: hashToken(token),
      userId: user.id,
      environmentKey: 'PARTNER',
      platformKey: 'SHOP',
      permissions: options.permissions ?? [],
      idTokenEncrypted: null,
      identitySessionId: null,
      snapshot: {
        issuer: user.issuer,
        subject: user.subject,
        email: user.email,
        emailVerified: user.email_verified,
        environmentTier: 'staging',
      },
      createdAt: now,
      expiresAt: now + 60 * MINUTE,
    };
    const bound = await store.createBoundSession({
      transactionId: transaction.id,
      keepUntil: now + 60 * MINUTE,
      session,
    });
    expect(bound).toBe('bound');
    return { transaction, session, token };
  }

  /** Spec 4.3: the resume after the onboarding pages issues the handoff. */
  async function resumed(user: UserRow, options: { permissions?: string[] } = {}) {
    const login_ = await signedIn(user, options);
    const redirect = await login.resumeLogin({
      transactionId: login_.transaction.id,
      sessionToken: login_.token,
    });
    const code = new URL(redirect).searchParams.get('code') ?? '';
    expect(redirect.startsWith(`${CALLBACK}?code=handoff_`)).toBe(true);
    return { ...login_, code };
  }

  const exchange = (code: string) =>
    handoff.exchange({ code, platformKey: 'SHOP', callbackUrl: CALLBACK });

  async function refusal(work: Promise<unknown>): Promise<string | undefined> {
    try {
      await work;
      return undefined;
    } catch (error) {
      if (error instanceof GatewayError) return error.code;
      throw error;
    }
  }

  it('the exchange answers what was known at issuance, reading no PostgreSQL row and calling no service (spec 4.4)', async () => {
    const user = await newUser();
    const { session, token, code } = await resumed(user);
    const { answer, statements: ran, calls: made } = await counting(() => exchange(code));

    expect(answer).toEqual({
      session: {
        id: session.id,
        expiresAt: new Date(session.expiresAt).toISOString(),
        gatewayToken: token,
      },
      user: {
        id: user.id,
        sub: user.subject,
        issuer: ISSUER,
        picture: 'https://cdn.example.com/me.png',
      },
      platformKey: 'SHOP',
      environment: { key: 'PARTNER', tier: 'staging' },
      // Resume read the platform's setting from the registry (spec 4.4 canCompleteCentrally).
      onboarding: {
        status: 'IN_PROGRESS',
        requirementVersion: 4,
        missingFields: ['company'],
        canCompleteCentrally: true,
      },
      profile: { status: 'COMPLETE', missingFields: [] },
      permissions: [],
      returnTo: 'https://shop.example.com/orders',
    });
    // The platform's session policy is asked of the registry client (the auth-flow's cache
    // in production, docs/decisions.md).
    expect(made).toEqual(['getPlatformSessionPolicy']);
    // The one atomic redeem: a statement of the SQL store, a Lua script on Redis.
    expect(ran).toEqual(store.kind === 'sql' ? [expect.stringMatching(/^with target as/)] : []);
    // Asked again, the used code is refused by the same one step (spec 3.2: used → 404).
    const again = await counting(() => refusal(exchange(code)));
    expect(again.answer).toBe('NOT_FOUND');
    expect(again.statements).toHaveLength(ran.length);
  });

  // Spec 2.9: "Atomically single-use"; 3.2: "used or expired | exchange | any | 404"; 4.4:
  // "invalid, expired, used or wrong-platform code: 404".
  it('a used code answers 404 NOT_FOUND to its own key and to every other (spec 2.9, 3.2, 4.4)', async () => {
    const user = await newUser();
    const { session, token, code } = await resumed(user);
    const first = await exchange(code);
    expect(first.session).toEqual({
      id: session.id,
      expiresAt: new Date(session.expiresAt).toISOString(),
      gatewayToken: token,
    });
    expect(await refusal(exchange(code))).toBe('NOT_FOUND');
    expect(
      await refusal(handoff.exchange({ code, platformKey: 'OTHER', callbackUrl: CALLBACK })),
    ).toBe('NOT_FOUND');
    expect(await refusal(exchange(code))).toBe('NOT_FOUND');
  });

  it("an exchange that reaches the store after its caller's deadline answers 503 SERVICE_UNAVAILABLE and leaves the code for the retry", async () => {
    const user = await newUser();
    const { session, code } = await resumed(user);
    const late = handoff.exchange({
      code,
      platformKey: 'SHOP',
      callbackUrl: CALLBACK,
      deadline: Date.now() - MINUTE,
    });
    expect(await refusal(late)).toBe('SERVICE_UNAVAILABLE');
    const retried = await handoff.exchange({
      code,
      platformKey: 'SHOP',
      callbackUrl: CALLBACK,
      deadline: Date.now() + MINUTE,
    });
    expect(retried.session.id).toBe(session.id);
  });

  it('the exchange refuses a code whose session was signed out since issuance, and the code is spent (spec 3.2, 3.3)', async () => {
    const user = await newUser();
    const { token, code } = await resumed(user);
    await store.revokeSession(hashToken(token), Date.now());
    expect(await refusal(exchange(code))).toBe('NOT_FOUND');

    const again = await resumed(user);
    await store.revokeUserSessions(user.id, Date.now());
    expect(await refusal(exchange(again.code))).toBe('NOT_FOUND');
  });

  it('the exchange answers no permission that was stripped since issuance (spec 3.3)', async () => {
    const user = await newUser();
    const { code } = await resumed(user, { permissions: ADMIN_PERMISSIONS });
    await store.stripUserPermissions(user.id);
    const answer = await exchange(code);
    expect(answer.permissions).toEqual([]);
  });

  it('a code presented for another platform or callback is refused and stays redeemable by its own key (spec 4.4)', async () => {
    const user = await newUser();
    const { code } = await resumed(user);
    expect(
      await refusal(
        handoff.exchange({ code, platformKey: 'SHOP', callbackUrl: 'https://shop.example.com/x' }),
      ),
    ).toBe('NOT_FOUND');
    expect(
      await refusal(handoff.exchange({ code, platformKey: 'OTHER', callbackUrl: CALLBACK })),
    ).toBe('NOT_FOUND');
    expect((await exchange(code)).platformKey).toBe('SHOP');
  });

  it('introspection answers from the session record and one read of the status; a suspended or deleted user is inactive at the next call (spec 4.5)', async () => {
    const user = await newUser();
    const { session, token } = await signedIn(user);
    const introspect = () => handoff.introspect({ token, platformKey: 'SHOP' });

    const { answer, statements: ran, calls: made } = await counting(introspect);
    expect(answer).toEqual(activeIntrospection(user, session));
    expect(made).toEqual(['getPlatformSessionPolicy']);
    expect(ran.filter((sql) => /authflow"?\."?users/.test(sql))).toEqual([
      // knex numbers the placeholder for pg.
      'select status from authflow.users where id = $1',
    ]);
    expect(ran).toHaveLength(store.kind === 'sql' ? 2 : 1);

    for (const status of ['SUSPENDED', 'SOFT_DELETED']) {
      await db.knex('authflow.users').where({ id: user.id }).update({ status });
      expect(await introspect()).toEqual({ active: false });
    }
    await db.knex('authflow.users').where({ id: user.id }).update({ status: 'ACTIVE' });
    expect((await introspect()).active).toBe(true);
    expect(await handoff.introspect({ token, platformKey: 'OTHER' })).toEqual({ active: false });
  });

  it('resume issues one handoff per login (spec 3.2: a second issue is 409 CONFLICT)', async () => {
    const user = await newUser();
    const { transaction, token } = await resumed(user);
    expect(
      await refusal(login.resumeLogin({ transactionId: transaction.id, sessionToken: token })),
    ).toBe('CONFLICT');
  });

  it('keeps the session token encrypted in the stored handoff while pending, and no other secret; nothing of it once redeemed (spec 2.9)', async () => {
    const user = await newUser();
    const { token, code } = await resumed(user);
    const codeHash = hashCredential(code);
    const stored = async () =>
      store.kind === 'sql'
        ? JSON.stringify(await db.knex('authflow.handoffs').where({ code_hash: codeHash }).first())
        : await redis.redis.get(`ho:${codeHash.replace(/^([0-9a-f]{8})\./, '{$1}')}`);
    const pending = await stored();
    expect(pending).toContain(hashToken(token));
    expect(pending).not.toContain(token);
    expect(pending).not.toContain(code);
    const sealed = /"(v1\.[^"]+)"/.exec(pending ?? '')?.[1];
    expect(sealed).toBeDefined();
    await exchange(code);
    // Redis deletes the handoff; SQL keeps the row, without the sealed token.
    const redeemed = await stored();
    if (store.kind === 'redis') expect(redeemed).toBe(null);
    expect(redeemed ?? '').not.toContain(sealed ?? 'none');
  });
});
