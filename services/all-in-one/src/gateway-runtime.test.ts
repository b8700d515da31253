import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Validator } from '@seriousme/openapi-schema-validator';
import { loadConfig } from '@gateway/config';
import { generateEncryptionKeySpec } from '@gateway/crypto';
import { connectRedis, createDatabase, type Database } from '@gateway/db';
import { createLogger } from '@gateway/telemetry';
import {
  createTestDatabase,
  createTestRedis,
  startTcpProxy,
  type TcpProxy,
  type TestDatabase,
  type TestRedis,
  waitFor,
} from '@gateway/testkit';
import type { Redis } from 'ioredis';
import { startGateway, type RunningGateway } from './gateway-runtime.js';

const config = loadConfig({
  IDENTITY_ISSUER: 'http://localhost:8080/api/auth/env/PROD',
  DATABASE_TIMEOUT_MS: '1000',
  SERVICE_CALL_TIMEOUT_MS: '2000',
  LOG_LEVEL: 'silent',
  GATEWAY_ENCRYPTION_KEYS: generateEncryptionKeySpec('k1'),
});
const logger = createLogger({ service: 'test', level: 'silent' });

async function get(gateway: RunningGateway, path: string) {
  const response = await fetch(`${gateway.url}${path}`);
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

describe('all-in-one gateway on PostgreSQL and Redis, reached through cuttable links', () => {
  let testDb: TestDatabase;
  let testRedis: TestRedis;
  let pgProxy: TcpProxy;
  let redisProxy: TcpProxy;
  let db: Database;
  let redis: Redis;
  let gateway: RunningGateway;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    testRedis = await createTestRedis();
    const pgUrl = new URL(testDb.url);
    const redisUrl = new URL(testRedis.url);
    pgProxy = await startTcpProxy({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) });
    redisProxy = await startTcpProxy({
      host: redisUrl.hostname,
      port: Number(redisUrl.port || 6379),
    });
    pgUrl.hostname = '127.0.0.1';
    pgUrl.port = String(pgProxy.port);
    db = await createDatabase({
      url: pgUrl.toString(),
      connectTimeoutMs: 1000,
      statementTimeoutMs: 1000,
    });
    redis = await connectRedis({
      url: `redis://127.0.0.1:${redisProxy.port}`,
      keyPrefix: testRedis.keyPrefix,
      timeoutMs: 1000,
    });
    gateway = await startGateway({ config, logger, db, redis, port: 0 });
  });

  afterAll(async () => {
    await gateway.close();
    redis.disconnect();
    await db.close();
    await pgProxy.close();
    await redisProxy.close();
    await testRedis.cleanup();
    await testDb.drop();
  });

  it('migrates every service schema into PostgreSQL at start', async () => {
    const schemas = await db.knex
      .select('schema_name')
      .from('information_schema.schemata')
      .whereIn('schema_name', ['registry', 'onboarding', 'authflow'])
      .orderBy('schema_name');
    expect(schemas.map((row: { schema_name: string }) => row.schema_name)).toEqual([
      'authflow',
      'onboarding',
      'registry',
    ]);
  });

  it('answers live and ready while PostgreSQL and Redis answer', async () => {
    expect(await get(gateway, '/health/live')).toMatchObject({
      status: 200,
      body: { status: 'live' },
    });
    expect(await get(gateway, '/health/ready')).toMatchObject({
      status: 200,
      body: { status: 'ready', checks: { registry: 'up', authFlow: 'up', onboarding: 'up' } },
    });
  });

  it('goes 503 with the error body when PostgreSQL is unreachable, and recovers without a restart', async () => {
    await pgProxy.cut();
    try {
      const started = Date.now();
      const down = await get(gateway, '/health/ready');
      expect(down.status).toBe(503);
      expect(down.body).toEqual({
        code: 'SERVICE_UNAVAILABLE',
        message: 'The gateway is not ready.',
        details: { checks: { registry: 'down', authFlow: 'down', onboarding: 'down' } },
      });
      expect(down.headers.get('retry-after')).toBe('5');
      // Bounded by the probe deadline, not by a TCP time-out.
      expect(Date.now() - started).toBeLessThan(5_000);
      // Liveness checks nothing, so the process is not restarted for a database outage.
      expect((await get(gateway, '/health/live')).status).toBe(200);
    } finally {
      await pgProxy.restore();
    }
    expect((await get(gateway, '/health/ready')).status).toBe(200);
  });

  it('goes 503 naming auth-flow when Redis is unreachable, and recovers', async () => {
    await redisProxy.cut();
    try {
      const down = await get(gateway, '/health/ready');
      expect(down.status).toBe(503);
      expect(down.body.details).toEqual({
        checks: { registry: 'up', authFlow: 'down', onboarding: 'up' },
      });
    } finally {
      await redisProxy.restore();
    }
    // ioredis reconnects in the background with a short back-off.
    await waitFor(async () => (await get(gateway, '/health/ready')).status === 200, {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'readiness once Redis is back',
    });
  });

  it('serves an OpenAPI 3.1 document that a validator accepts, with every operationId', async () => {
    const { status, body } = await get(gateway, '/openapi.json');
    expect(status).toBe(200);
    expect(body.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const operationIds = Object.values(
      body.paths as Record<string, Record<string, { operationId: string }>>,
    )
      .flatMap((methods) => Object.values(methods).map((operation) => operation.operationId))
      .sort();
    // Spec 4.1-4.7, 4.8 (account), 4.10-4.12, 4.13 (platform fields) and 4.14, plus the audit log,
    // the user's sessions and back-channel logout.
    expect(operationIds).toEqual(
      [
        'completeLogout',
        'handleBackchannelLogout',
        'exchangeAuthenticationHandoff',
        'handleIdentityCallback',
        'introspectGatewaySession',
        'logout',
        'resumeAuthentication',
        'startAuthentication',
        'activateIdentityEnvironment',
        'activatePlatform',
        'archivePlatform',
        'createIdentityEnvironment',
        'createPlatform',
        'createPlatformCredential',
        'deactivateIdentityEnvironment',
        'deactivatePlatform',
        'deletePlatformCredential',
        'getIdentityEnvironment',
        'getLiveness',
        'getPlatform',
        'getReadiness',
        'listAuditRecords',
        'listUsers',
        'listOnboardingFields',
        'createOnboardingField',
        'getOnboardingField',
        'updateOnboardingField',
        'archiveOnboardingField',
        'listGlobalOnboardingFields',
        'createGlobalOnboardingField',
        'getGlobalOnboardingField',
        'updateGlobalOnboardingField',
        'archiveGlobalOnboardingField',
        'bootstrapCentralSession',
        'getMyGlobalOnboardingRequirements',
        'getMyGlobalOnboardingStatus',
        'putMyGlobalOnboardingValues',
        'getMyOnboardingRequirements',
        'getMyOnboardingStatus',
        'putMyOnboardingValues',
        'completeMyOnboarding',
        'grantPlatformAdmin',
        'revokePlatformAdmin',
        'revokeUserSessions',
        'listUserSessions',
        'revokeUserSession',
        'getMyIdentity',
        'deleteMyAccount',
        'listMySessions',
        'revokeMySession',
        'revokeMyOtherSessions',
        'getMyUserDetails',
        'getMyProfile',
        'patchMyProfile',
        'getMyLocalProfileDetails',
        'createAvatarUploadRequest',
        'uploadMyAvatar',
        'getAvatar',
        'listIdentityEnvironments',
        'listPlatforms',
        'restorePlatform',
        'revokePreviousPlatformCredentialSecret',
        'rotatePlatformCredential',
        'updateIdentityEnvironment',
        'updatePlatform',
        'validateIdentityEnvironment',
      ].sort(),
    );
  });

  it('serves the interactive API explorer at /docs', async () => {
    const page = await fetch(`${gateway.url}/docs`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('/docs/assets/swagger-ui-bundle.js');
    const bundle = await fetch(`${gateway.url}/docs/assets/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
  });
});

describe('all-in-one gateway on embedded PGlite', () => {
  let db: Database;
  let gateway: RunningGateway;

  beforeAll(async () => {
    db = await createDatabase({ inMemory: true });
    gateway = await startGateway({ config, logger, db, port: 0 });
  });

  afterAll(async () => {
    await gateway.close();
    await db.close();
  });

  it('migrates and answers ready with the SQL store and no Redis', async () => {
    expect(await get(gateway, '/health/ready')).toMatchObject({
      status: 200,
      body: { checks: { registry: 'up', authFlow: 'up', onboarding: 'up' } },
    });
  });
});
