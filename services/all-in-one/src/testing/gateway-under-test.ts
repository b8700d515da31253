import { loadConfig, type GatewayConfig } from '@gateway/config';
import { generateEncryptionKeySpec } from '@gateway/crypto';
import { createDatabase, migrateSchema, type Database, type RedisClient } from '@gateway/db';
import { createLogger, type Logger } from '@gateway/telemetry';
import {
  createTestDatabase,
  startTestOpenIdProvider,
  type TestDatabase,
  type TestOpenIdProvider,
  type TestOpenIdProviderOptions,
  type TestDatabaseTemplate,
} from '@gateway/testkit';
import { allSchemaMigrations, startGateway, type RunningGateway } from '../gateway-runtime.js';

export type ApiResponse = {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { items?: Record<string, unknown>[] };
};

export type ApiCall = (
  method: string,
  path: string,
  options?: {
    token?: string | null;
    body?: unknown;
    rawBody?: string;
    headers?: Record<string, string>;
  },
) => Promise<ApiResponse>;

export type GatewayUnderTest = {
  gateway: RunningGateway;
  config: GatewayConfig;
  db: Database;
  databaseUrl: string;
  /** The deployment (PROD) environment's real OpenID Provider. */
  provider: TestOpenIdProvider;
  /** A deployment machine token carrying every admin scope. */
  adminToken: string;
  call: ApiCall;
  /** Starts another gateway instance on the same database with other settings. */
  startAnother(
    env: Record<string, string>,
  ): Promise<{ call: ApiCall; url: string; close(): Promise<void> }>;
  close(): Promise<void>;
};

const quietLogger = createLogger({ service: 'test', level: 'silent' });

/** Every service schema migrated: what the gateway finds after its first start. */
export const migratedGatewayDatabase: TestDatabaseTemplate = {
  key: 'gateway',
  async prepare(url) {
    const db = await createDatabase({ url });
    try {
      for (const migrations of allSchemaMigrations) await migrateSchema(db, migrations);
    } finally {
      await db.close();
    }
  },
};

function callerOf(baseUrl: string, defaultToken: string): ApiCall {
  return async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? defaultToken : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: (text === '' ? {} : JSON.parse(text)) as ApiResponse['body'],
    };
  };
}

/**
 * The all-in-one gateway on a fresh PostgreSQL database, with a real OpenID Provider as its
 * deployment identity environment, reached over HTTP like an admin would.
 */
export async function startGatewayUnderTest(
  env: Record<string, string> = {},
  providerOptions: TestOpenIdProviderOptions = {},
  /** A logger to read what the gateway logs (default: silent); Redis for the login state. */
  runtime: { logger?: Logger; redis?: RedisClient } = {},
): Promise<GatewayUnderTest> {
  const provider = await startTestOpenIdProvider({ environmentKey: 'PROD', ...providerOptions });
  const gatewayClient = provider.clients.find((client) => client.clientId === 'test-gateway');
  const testDb: TestDatabase = await createTestDatabase({ template: migratedGatewayDatabase });
  const baseEnv = {
    IDENTITY_ISSUER: provider.issuer,
    IDENTITY_OIDC_CLIENT_ID: 'test-gateway',
    IDENTITY_OIDC_CLIENT_SECRET: gatewayClient?.clientSecret ?? 'no-gateway-client',
    IDENTITY_ACCESS_TOKEN_AUDIENCE: provider.audience,
    IDENTITY_DEPLOYMENT_TIER: 'development',
    IDENTITY_ENVIRONMENT_SECRET_KEY: 'a-secret-key-of-at-least-32-characters!!',
    SERVICE_CALL_TIMEOUT_MS: '3000',
    DATABASE_TIMEOUT_MS: '2000',
    LOG_LEVEL: 'silent',
    GATEWAY_ENCRYPTION_KEYS: generateEncryptionKeySpec('k1'),
  };
  const config = loadConfig({ ...baseEnv, ...env });
  const open = async (settings: GatewayConfig) => {
    const db = await createDatabase({ url: testDb.url, connectTimeoutMs: 2000 });
    const gateway = await startGateway({
      config: settings,
      logger: runtime.logger ?? quietLogger,
      db,
      ...(runtime.redis === undefined ? {} : { redis: runtime.redis }),
      port: 0,
    });
    return { db, gateway };
  };
  const { db, gateway } = await open(config);
  const adminToken = await provider.machineToken({
    scope: 'platforms:admin onboarding:schema:read onboarding:schema:write',
  });
  return {
    gateway,
    config,
    db,
    databaseUrl: testDb.url,
    provider,
    adminToken,
    call: callerOf(gateway.url, adminToken),
    async startAnother(extraEnv) {
      const other = await open(loadConfig({ ...baseEnv, ...env, ...extraEnv }));
      return {
        call: callerOf(other.gateway.url, adminToken),
        url: other.gateway.url,
        close: async () => {
          await other.gateway.close();
          await other.db.close();
        },
      };
    },
    async close() {
      await gateway.close();
      await db.close();
      await provider.close();
      await testDb.drop();
    },
  };
}
