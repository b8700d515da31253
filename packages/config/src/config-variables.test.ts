import { describe, it, expect } from '@jest/globals';
import { renderConfigTable } from './config-table.js';
import {
  configVariables,
  derivedConfigFields,
  secretConfigVariableNames,
  variablesRequiredBy,
} from './config-variables.js';
import { gatewayEnvSchema } from './env-schema.js';
import { loadConfig } from './load-config.js';

const ISSUER = 'https://id.example.com';

describe('configVariables', () => {
  it('documents exactly the variables of the schema', () => {
    const documented = configVariables.map((entry) => entry.name);
    expect([...documented].sort()).toEqual(Object.keys(gatewayEnvSchema.shape).sort());
    expect(new Set(documented).size).toBe(documented.length);
  });

  it('maps every variable to its own field of the loaded configuration', () => {
    const config = loadConfig({ IDENTITY_ISSUER: ISSUER });
    const fields = configVariables.map((entry) => entry.field);
    expect(new Set(fields).size).toBe(fields.length);
    const derived = Object.keys(derivedConfigFields);
    expect(derived.sort()).toEqual(['baseUrl', 'production', 'redis']);
    expect([...fields, ...derived].sort()).toEqual(Object.keys(config).sort());
  });

  it('names real variables as the sources of each derived field, and alternatives both ways', () => {
    const names = new Set(configVariables.map((entry) => entry.name));
    for (const sources of Object.values(derivedConfigFields)) {
      for (const name of sources ?? []) expect(names).toContain(name);
    }
    for (const entry of configVariables) {
      for (const other of entry.alternatives) {
        const back = configVariables.find((candidate) => candidate.name === other);
        expect({ entry: entry.name, other, back: back?.alternatives }).toEqual({
          entry: entry.name,
          other,
          back: expect.arrayContaining([entry.name]),
        });
      }
    }
  });

  it('maps each variable to the field its value lands in', () => {
    for (const entry of configVariables) {
      const value =
        entry.name === 'IDENTITY_ISSUER'
          ? 'https://other-issuer.example.com'
          : sampleValue(entry.name);
      const config = loadConfig({ IDENTITY_ISSUER: ISSUER, [entry.name]: value });
      const loaded: unknown = config[entry.field];
      const shown = Array.isArray(loaded) ? loaded.join(',') : String(loaded);
      expect({ name: entry.name, value: shown }).toEqual({ name: entry.name, value });
    }
  });

  it('documents the defaults that loadConfig really applies', () => {
    const config = loadConfig({ IDENTITY_ISSUER: ISSUER });
    for (const entry of configVariables.filter((variable) => !variable.required)) {
      const loaded: unknown = config[entry.field];
      if (entry.default === undefined) {
        const unset = loaded === undefined || (Array.isArray(loaded) && loaded.length === 0);
        expect({ name: entry.name, unset }).toEqual({ name: entry.name, unset: true });
      } else {
        const expected = entry.default.replace('<PORT>', String(config.port));
        expect({ name: entry.name, value: String(loaded) }).toEqual({
          name: entry.name,
          value: expected,
        });
      }
    }
  });

  it('marks only IDENTITY_ISSUER as required', () => {
    expect(configVariables.filter((entry) => entry.required).map((entry) => entry.name)).toEqual([
      'IDENTITY_ISSUER',
    ]);
  });

  it('names the run commands that stop without a variable: only start:gateway stops for any', () => {
    expect(variablesRequiredBy('start')).toEqual([]);
    expect(variablesRequiredBy('start:split')).toEqual([]);
    expect(variablesRequiredBy('start:gateway')).toEqual([
      'IDENTITY_ISSUER',
      'GATEWAY_ENCRYPTION_KEYS',
    ]);
    // Every variable the schema cannot do without stops start:gateway.
    for (const entry of configVariables.filter((variable) => variable.required)) {
      expect(entry.requiredBy).toContain('start:gateway');
    }
  });

  it('marks the secret variables', () => {
    expect([...secretConfigVariableNames].sort()).toEqual([
      'DATABASE_URL',
      'GATEWAY_ENCRYPTION_KEYS',
      'IDENTITY_ENVIRONMENT_SECRET_KEY',
      'IDENTITY_OIDC_CLIENT_SECRET',
      'IDENTITY_SERVICE_KEY',
      'REDIS_PASSWORD',
      'REDIS_URL',
    ]);
  });

  it('has a one-line description ending with a full stop for every variable', () => {
    for (const entry of configVariables) {
      expect(entry.description).toMatch(/^\S.{10,}\.$/);
      expect(entry.description).not.toContain('\n');
    }
  });
});

describe('renderConfigTable', () => {
  const table = renderConfigTable();
  const lines = table.trimEnd().split('\n');

  it('has the header and one row per variable', () => {
    expect(lines[0]).toBe('| Variable | Required | Default | Description |');
    expect(lines[1]).toBe('|---|---|---|---|');
    expect(lines).toHaveLength(configVariables.length + 2);
  });

  it('shows name, required flag, default and description of each variable', () => {
    expect(table).toContain('| `IDENTITY_ISSUER` | `start:gateway` |  | Deployment issuer');
    expect(table).toMatch(
      /\| `GATEWAY_ENCRYPTION_KEYS` \| `start:gateway` \| {2}\| .* Secret\. \|/,
    );
    expect(table).toContain(
      '| `AUTH_HANDOFF_TTL_SECONDS` | no | `60` | Handoff lifetime in seconds, allowed 30 to 300. |',
    );
    expect(table).toMatch(/\| `IDENTITY_SERVICE_KEY` \| no \| {2}\| .* Secret\. \|/);
    for (const entry of configVariables) expect(table).toContain(`| \`${entry.name}\` |`);
  });

  it('lists every command that requires a variable in its Required cell', () => {
    const custom = renderConfigTable([
      {
        name: 'DATABASE_URL',
        field: 'databaseUrl',
        description: 'A database.',
        required: false,
        requiredBy: ['start:gateway', 'start:split'],
        secret: false,
        alternatives: [],
      },
    ]);
    expect(custom).toContain(
      '| `DATABASE_URL` | `start:gateway`, `start:split` |  | A database. |',
    );
  });

  it('keeps every row at four cells, escaping pipes in text', () => {
    const custom = renderConfigTable([
      {
        name: 'PORT',
        field: 'port',
        description: 'a | b.',
        default: '1|2',
        required: false,
        requiredBy: [],
        secret: false,
        alternatives: [],
      },
    ]);
    const row = custom.trimEnd().split('\n')[2] ?? '';
    expect(row).toBe('| `PORT` | no | `1\\|2` | a \\| b. |');
    expect(row.split(/(?<!\\)\|/)).toHaveLength(6);
  });
});

/** A valid, already-normalised value for each variable (the loaded value must equal it). */
function sampleValue(name: string): string {
  const samples: Record<string, string> = {
    PORT: '9090',
    NODE_ENV: 'test',
    LOG_LEVEL: 'debug',
    LOG_FORMAT: 'pretty',
    IDENTITY_OIDC_CLIENT_ID: 'gateway-client',
    IDENTITY_OIDC_CLIENT_SECRET: 'client-secret',
    IDENTITY_POST_LOGOUT_REDIRECT_URI: 'https://app.example.com/bye',
    ACCOUNT_CENTER_URL: 'https://account.example.com',
    IDENTITY_ACCESS_TOKEN_AUDIENCE: 'api://gateway',
    ACCESS_TOKEN_MAX_LIFETIME_SECONDS: '3600',
    IDENTITY_ENVIRONMENT_SECRET_KEY: 'e'.repeat(32),
    IDENTITY_SERVICE_URL: 'http://identity:9000',
    IDENTITY_SERVICE_KEY: 'k'.repeat(40),
    PLATFORM_ADMIN_BOOTSTRAP_EMAILS: 'a@example.com,b@example.com',
    ADMIN_POWER_CONSOLE_ONLY: 'true',
    AUTH_CALLBACK_URL: 'https://gw.example.com/v1/auth/callback',
    AUTH_HANDOFF_TTL_SECONDS: '90',
    CORS_ORIGINS: 'https://app.example.com,http://localhost:3000',
    DATABASE_URL: 'postgres://db/gw',
    GATEWAY_DATA_DIR: '/data',
    REDIS_URL: 'redis://cache:6379',
    REDIS_SENTINELS: 'sentinel-0.redis:26379,10.0.0.7:26379,[fd00::7]:26379',
    REDIS_SENTINEL_MASTER: 'gateway-master',
    REDIS_CLUSTER_NODES: 'redis-0.redis:6379,redis-1.redis:6379',
    REDIS_PASSWORD: 'redis-password',
    REDIS_TLS: 'true',
    REDIS_REQUIRE_PERSISTENCE: 'true',
    REDIS_KEY_PREFIX: 'gw:',
    IDENTITY_DEPLOYMENT_TIER: 'staging',
    REGISTRY_SERVICE_URL: 'http://registry:1',
    AUTH_FLOW_SERVICE_URL: 'http://auth-flow:2',
    ONBOARDING_SERVICE_URL: 'http://onboarding:3',
    GATEWAY_ENCRYPTION_KEYS: `k1:${'A'.repeat(42)}A`,
    SERVICE_CALL_TIMEOUT_MS: '2500',
    DATABASE_TIMEOUT_MS: '3500',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318',
    OTEL_SERVICE_NAME: 'gateway',
    METRICS_PORT: '9464',
    TRUSTED_PROXIES: '10.0.0.0/8,::1,loopback',
    RATE_LIMIT_WINDOW_SECONDS: '30',
    PLATFORM_AUTH_FAILURE_WINDOW_SECONDS: '10',
    RATE_LIMIT_BROWSER_PER_IP: '100',
    RATE_LIMIT_EXCHANGE_PER_CLIENT: '200',
    RATE_LIMIT_INTROSPECT_PER_CLIENT: '0',
    RATE_LIMIT_SERVER_PER_IP: '5000',
    OVERLOAD_MAX_IN_FLIGHT: '64',
  };
  const value = samples[name];
  if (value === undefined) throw new Error(`no sample value for ${name}; add one`);
  return value;
}
