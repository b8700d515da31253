import { randomBytes } from 'node:crypto';
import { describe, it, expect } from '@jest/globals';
import { ConfigError } from './config-error.js';
import { loadConfig, requireConfigValues } from './load-config.js';

const ISSUER = 'https://id.example.com';
const load = (env: NodeJS.ProcessEnv) => loadConfig({ IDENTITY_ISSUER: ISSUER, ...env });

function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected loadConfig to throw ConfigError');
}

/** The rule reported for `name` when the environment `env` (plus a valid issuer) is loaded. */
function ruleFor(name: string, env: NodeJS.ProcessEnv): string {
  const error = configError({ IDENTITY_ISSUER: ISSUER, ...env });
  expect(error.variables).toEqual([name]);
  expect(error.message).toContain(`  - ${name}: `);
  return error.issues.map((issue) => issue.rule).join('; ');
}

const keyText = (bytes = 32): string => randomBytes(bytes).toString('base64url');

describe('loadConfig defaults', () => {
  it('fills every default from a minimal environment', () => {
    const config = loadConfig({ IDENTITY_ISSUER: ISSUER });
    expect(config).toEqual({
      port: 8080,
      nodeEnv: 'development',
      production: false,
      logLevel: 'info',
      identityIssuer: ISSUER,
      identityOidcClientId: undefined,
      identityOidcClientSecret: undefined,
      identityPostLogoutRedirectUri: undefined,
      accountCenterUrl: undefined,
      accessTokenAudience: 'http://localhost:8080',
      accessTokenMaxLifetimeSeconds: 86400,
      identityEnvironmentSecretKey: undefined,
      adminPowerConsoleOnly: false,
      identityServiceUrl: undefined,
      identityServiceKey: undefined,
      platformAdminBootstrapEmails: [],
      authCallbackUrl: 'http://localhost:8080/v1/auth/callback',
      baseUrl: 'http://localhost:8080',
      authHandoffTtlSeconds: 60,
      corsOrigins: [],
      databaseUrl: undefined,
      dataDir: '.gateway-data',
      redisUrl: undefined,
      redisSentinels: [],
      redisSentinelMaster: 'mymaster',
      redisClusterNodes: [],
      redisPassword: undefined,
      redisTls: false,
      redis: undefined,
      redisRequirePersistence: false,
      redisKeyPrefix: '',
      identityDeploymentTier: 'production',
      registryServiceUrl: undefined,
      authFlowServiceUrl: undefined,
      onboardingServiceUrl: undefined,
      encryptionKeys: undefined,
      serviceCallTimeoutMs: 5000,
      databaseTimeoutMs: 5000,
      otlpEndpoint: undefined,
      otelServiceName: undefined,
      trustedProxies: [],
      rateLimitWindowSeconds: 60,
      platformAuthFailureWindowSeconds: 60,
      rateLimitBrowserPerIp: 300,
      rateLimitExchangePerClient: 600,
      rateLimitIntrospectPerClient: 60000,
      rateLimitServerPerIp: 120000,
      overloadMaxInFlight: 100,
    });
  });

  it('TRUSTED_PROXIES takes addresses, CIDR blocks and the proxy keywords only', () => {
    expect(
      load({ TRUSTED_PROXIES: '10.1.2.3, 172.16.0.0/12,fd00::/8,uniquelocal' }).trustedProxies,
    ).toEqual(['10.1.2.3', '172.16.0.0/12', 'fd00::/8', 'uniquelocal']);
    for (const bad of ['everyone', '10.0.0.0/33', '::1/129', '10.0.0.1/8/1', 'proxy.example.com']) {
      expect(ruleFor('TRUSTED_PROXIES', { TRUSTED_PROXIES: bad })).toMatch(
        /IP addresses, CIDR blocks/,
      );
    }
  });

  it('derives the default callback URL from PORT', () => {
    const config = load({ PORT: '3000' });
    expect(config.port).toBe(3000);
    expect(config.authCallbackUrl).toBe('http://localhost:3000/v1/auth/callback');
    expect(config.baseUrl).toBe('http://localhost:3000');
  });

  it('ignores unknown variables', () => {
    const config = load({ HOME: '/root', SOME_OTHER_TOOL: 'x' });
    expect(config).not.toHaveProperty('HOME');
    expect(Object.values(config)).not.toContain('/root');
  });

  it('reads process.env when called without arguments', () => {
    const saved = process.env.IDENTITY_ISSUER;
    process.env.IDENTITY_ISSUER = 'https://from-process-env.example.com/';
    try {
      expect(loadConfig().identityIssuer).toBe('https://from-process-env.example.com');
    } finally {
      if (saved === undefined) delete process.env.IDENTITY_ISSUER;
      else process.env.IDENTITY_ISSUER = saved;
    }
  });

  it('returns a frozen configuration', () => {
    const config = load({ CORS_ORIGINS: 'https://a.example.com' });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.corsOrigins)).toBe(true);
  });
});

describe('empty values', () => {
  it('treat empty and blank strings as unset everywhere', () => {
    const everyVariableEmpty: NodeJS.ProcessEnv = {
      PORT: '',
      NODE_ENV: '',
      LOG_LEVEL: ' ',
      IDENTITY_OIDC_CLIENT_ID: '',
      IDENTITY_OIDC_CLIENT_SECRET: '',
      IDENTITY_POST_LOGOUT_REDIRECT_URI: '',
      ACCOUNT_CENTER_URL: '',
      IDENTITY_ACCESS_TOKEN_AUDIENCE: '',
      IDENTITY_ENVIRONMENT_SECRET_KEY: '',
      IDENTITY_SERVICE_URL: '',
      IDENTITY_SERVICE_KEY: '  ',
      PLATFORM_ADMIN_BOOTSTRAP_EMAILS: '',
      ADMIN_POWER_CONSOLE_ONLY: ' ',
      AUTH_CALLBACK_URL: '',
      AUTH_HANDOFF_TTL_SECONDS: '',
      CORS_ORIGINS: '',
      DATABASE_URL: '',
      GATEWAY_DATA_DIR: '',
      REDIS_URL: '',
      REDIS_SENTINELS: ' ',
      REDIS_SENTINEL_MASTER: '',
      REDIS_CLUSTER_NODES: '',
      REDIS_PASSWORD: '',
      REDIS_TLS: '',
      REDIS_REQUIRE_PERSISTENCE: '',
      REGISTRY_SERVICE_URL: '',
      AUTH_FLOW_SERVICE_URL: '',
      ONBOARDING_SERVICE_URL: '',
      GATEWAY_ENCRYPTION_KEYS: '',
      SERVICE_CALL_TIMEOUT_MS: '',
      DATABASE_TIMEOUT_MS: '',
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
      OTEL_SERVICE_NAME: '',
    };
    expect(load(everyVariableEmpty)).toEqual(load({}));
  });

  it('make IDENTITY_ISSUER missing', () => {
    const error = configError({ IDENTITY_ISSUER: '' });
    expect(error.variables).toEqual(['IDENTITY_ISSUER']);
    expect(error.message).toContain('IDENTITY_ISSUER: is required');
  });

  it('leave IDENTITY_POST_LOGOUT_REDIRECT_URI unset (falls back to ACCOUNT_CENTER_URL)', () => {
    const config = load({
      IDENTITY_POST_LOGOUT_REDIRECT_URI: '',
      ACCOUNT_CENTER_URL: 'https://account.example.com',
    });
    expect(config.identityPostLogoutRedirectUri).toBeUndefined();
    expect(config.accountCenterUrl).toBe('https://account.example.com');
  });
});

describe('IDENTITY_ISSUER', () => {
  it('is required', () => {
    const error = configError({});
    expect(error.variables).toEqual(['IDENTITY_ISSUER']);
  });

  it.each([
    'http://localhost:8081',
    'http://127.0.0.1:8081/realms/dev',
    'http://[::1]:8081',
    'http://id.localhost',
    'http://LOCALHOST:1234',
  ])('allows http for the loopback host %s', (issuer) => {
    expect(load({ IDENTITY_ISSUER: issuer }).identityIssuer).toBe(issuer);
  });

  it.each([
    'http://id.example.com',
    'http://10.0.0.5',
    'http://localhost.example.com',
    'http://127.0.0.2',
    'http://notlocalhost',
  ])('rejects http for the non-loopback host %s', (issuer) => {
    expect(ruleFor('IDENTITY_ISSUER', { IDENTITY_ISSUER: issuer })).toMatch(/must use https/);
  });

  it.each([
    ['query', 'https://id.example.com/?tenant=a', /query or fragment/],
    ['empty query', 'https://id.example.com/realms/a?', /query or fragment/],
    ['fragment', 'https://id.example.com/#x', /query or fragment/],
    ['username and password', 'https://user:pass@id.example.com', /username or password/],
    ['username', 'https://user@id.example.com', /username or password/],
    ['empty credentials', 'https://@id.example.com', /username or password/],
    ['other scheme', 'ftp://id.example.com', /http/],
    ['relative URL', '/realms/a', /http/],
    ['not a URL', 'id.example.com', /http/],
  ])('rejects an issuer with %s', (_label, issuer, rule) => {
    expect(ruleFor('IDENTITY_ISSUER', { IDENTITY_ISSUER: issuer })).toMatch(rule);
  });

  it('removes a trailing slash and keeps the rest exactly', () => {
    expect(load({ IDENTITY_ISSUER: 'https://id.example.com/' }).identityIssuer).toBe(
      'https://id.example.com',
    );
    expect(
      load({ IDENTITY_ISSUER: 'https://ID.Example.com:443/Realms/Main/' }).identityIssuer,
    ).toBe('https://ID.Example.com:443/Realms/Main');
    expect(load({ IDENTITY_ISSUER: '  https://id.example.com/realms/a  ' }).identityIssuer).toBe(
      'https://id.example.com/realms/a',
    );
  });
});

describe('integer settings', () => {
  it.each(['29', '301', 'abc', '60.5', '-60', '6e1', '0x3c'])(
    'AUTH_HANDOFF_TTL_SECONDS rejects %s',
    (value) => {
      expect(ruleFor('AUTH_HANDOFF_TTL_SECONDS', { AUTH_HANDOFF_TTL_SECONDS: value })).toBe(
        'must be an integer from 30 to 300',
      );
    },
  );

  it.each([
    ['30', 30],
    ['300', 300],
    [' 120 ', 120],
  ])('AUTH_HANDOFF_TTL_SECONDS accepts %s', (value, expected) => {
    expect(load({ AUTH_HANDOFF_TTL_SECONDS: value }).authHandoffTtlSeconds).toBe(expected);
  });

  it.each(['0', '65536', 'http', '80a'])('PORT rejects %s', (value) => {
    expect(ruleFor('PORT', { PORT: value })).toBe('must be an integer from 1 to 65535');
  });

  it('PORT accepts 1 and 65535', () => {
    expect(load({ PORT: '1' }).port).toBe(1);
    expect(load({ PORT: '65535' }).port).toBe(65535);
  });

  it.each(['SERVICE_CALL_TIMEOUT_MS', 'DATABASE_TIMEOUT_MS'])('%s is 100 to 60000', (name) => {
    expect(ruleFor(name, { [name]: '99' })).toBe('must be an integer from 100 to 60000');
    expect(ruleFor(name, { [name]: '60001' })).toBe('must be an integer from 100 to 60000');
    const low = load({ [name]: '100' });
    const high = load({ [name]: '60000' });
    const field = name === 'DATABASE_TIMEOUT_MS' ? 'databaseTimeoutMs' : 'serviceCallTimeoutMs';
    expect(low[field]).toBe(100);
    expect(high[field]).toBe(60000);
  });
});

describe('NODE_ENV and LOG_LEVEL', () => {
  it('production sets the production flag', () => {
    expect(load({ NODE_ENV: 'production' })).toMatchObject({
      nodeEnv: 'production',
      production: true,
    });
    expect(load({ NODE_ENV: 'test' })).toMatchObject({ nodeEnv: 'test', production: false });
  });

  it('rejects unknown environments and levels', () => {
    expect(ruleFor('NODE_ENV', { NODE_ENV: 'prod' })).toBe(
      'must be one of production, development, test',
    );
    expect(ruleFor('LOG_LEVEL', { LOG_LEVEL: 'verbose' })).toBe(
      'must be one of fatal, error, warn, info, debug, trace, silent',
    );
  });

  it.each(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])(
    'accepts level %s',
    (level) => {
      expect(load({ LOG_LEVEL: level }).logLevel).toBe(level);
    },
  );
});

describe('IDENTITY_OIDC_CLIENT_ID', () => {
  it('accepts the spec pattern', () => {
    expect(load({ IDENTITY_OIDC_CLIENT_ID: 'gateway@prod.~_-1' }).identityOidcClientId).toBe(
      'gateway@prod.~_-1',
    );
    expect(load({ IDENTITY_OIDC_CLIENT_ID: 'a'.repeat(128) }).identityOidcClientId).toHaveLength(
      128,
    );
  });

  it.each(['has space', 'a/b', 'a'.repeat(129), 'ünicode'])('rejects %s', (value) => {
    expect(ruleFor('IDENTITY_OIDC_CLIENT_ID', { IDENTITY_OIDC_CLIENT_ID: value })).toBe(
      'must match ^[0-9A-Za-z@._~-]{1,128}$',
    );
  });
});

describe('secret keys', () => {
  it.each(['IDENTITY_ENVIRONMENT_SECRET_KEY', 'IDENTITY_SERVICE_KEY'])(
    '%s must be at least 32 characters',
    (name) => {
      expect(ruleFor(name, { [name]: 'x'.repeat(31) })).toBe('must be at least 32 characters');
      const config = load({ [name]: 'x'.repeat(32) });
      expect(Object.values(config)).toContain('x'.repeat(32));
    },
  );

  it('keeps secret values byte for byte (no trimming)', () => {
    const secret = ` ${'s'.repeat(40)} `;
    const config = load({ IDENTITY_OIDC_CLIENT_SECRET: secret, IDENTITY_SERVICE_KEY: secret });
    expect(config.identityOidcClientSecret).toBe(secret);
    expect(config.identityServiceKey).toBe(secret);
  });
});

describe('URL settings', () => {
  it.each([
    ['IDENTITY_POST_LOGOUT_REDIRECT_URI', 'identityPostLogoutRedirectUri'],
    ['ACCOUNT_CENTER_URL', 'accountCenterUrl'],
    ['IDENTITY_SERVICE_URL', 'identityServiceUrl'],
    ['REGISTRY_SERVICE_URL', 'registryServiceUrl'],
    ['AUTH_FLOW_SERVICE_URL', 'authFlowServiceUrl'],
    ['ONBOARDING_SERVICE_URL', 'onboardingServiceUrl'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'otlpEndpoint'],
  ] as const)('%s accepts http(s) URLs and rejects others', (name, field) => {
    expect(load({ [name]: 'https://svc.example.com/path' })[field]).toBe(
      'https://svc.example.com/path',
    );
    expect(load({ [name]: 'http://registry:8443' })[field]).toBe('http://registry:8443');
    for (const bad of ['registry:8443', 'ftp://svc.example.com', 'not a url', '/relative']) {
      expect(ruleFor(name, { [name]: bad })).toBe('must be an absolute http:// or https:// URL');
    }
  });

  it('DATABASE_URL takes postgres:// or postgresql:// only', () => {
    expect(load({ DATABASE_URL: 'postgres://u:p@db:5432/gw' }).databaseUrl).toBe(
      'postgres://u:p@db:5432/gw',
    );
    expect(load({ DATABASE_URL: 'postgresql://db/gw' }).databaseUrl).toBe('postgresql://db/gw');
    expect(ruleFor('DATABASE_URL', { DATABASE_URL: 'mysql://db/gw' })).toBe(
      'must be a postgres:// or postgresql:// URL',
    );
    expect(ruleFor('DATABASE_URL', { DATABASE_URL: 'db:5432' })).toBe(
      'must be a postgres:// or postgresql:// URL',
    );
  });

  it('REDIS_KEY_PREFIX defaults to none and takes a short key-safe prefix', () => {
    expect(load({}).redisKeyPrefix).toBe('');
    expect(load({ REDIS_KEY_PREFIX: 'gw:blue:' }).redisKeyPrefix).toBe('gw:blue:');
    expect(ruleFor('REDIS_KEY_PREFIX', { REDIS_KEY_PREFIX: 'has space' })).toBe(
      'must be 1 to 64 letters, digits, `:`, `_` or `-`',
    );
  });

  it('REDIS_URL takes redis:// or rediss:// only', () => {
    expect(load({ REDIS_URL: 'redis://cache:6379' }).redisUrl).toBe('redis://cache:6379');
    expect(load({ REDIS_URL: 'rediss://:pw@cache:6380/1' }).redisUrl).toBe(
      'rediss://:pw@cache:6380/1',
    );
    expect(ruleFor('REDIS_URL', { REDIS_URL: 'https://cache' })).toBe(
      'must be a redis:// or rediss:// URL',
    );
  });

  it('REDIS_URL is single mode: its password and rediss:// apply, or REDIS_PASSWORD and REDIS_TLS', () => {
    expect(load({ REDIS_URL: 'rediss://:pw@cache:6380/1' }).redis).toEqual({
      mode: 'single',
      url: 'rediss://:pw@cache:6380/1',
      password: undefined,
      tls: true,
    });
    expect(
      load({ REDIS_URL: 'redis://cache:6379', REDIS_PASSWORD: ' pass word ', REDIS_TLS: 'true' })
        .redis,
    ).toEqual({ mode: 'single', url: 'redis://cache:6379', password: ' pass word ', tls: true });
    expect(load({ REDIS_URL: 'REDISS://cache' }).redis?.tls).toBe(true);
  });

  it('REDIS_SENTINELS is Sentinel mode, with REDIS_SENTINEL_MASTER (mymaster by default)', () => {
    const config = load({
      REDIS_SENTINELS: ' sentinel-0.redis.svc:26379 , 10.0.0.7:26380,[fd00::7]:26381,',
      REDIS_PASSWORD: 'pw',
    });
    expect(config.redisSentinels).toEqual([
      'sentinel-0.redis.svc:26379',
      '10.0.0.7:26380',
      '[fd00::7]:26381',
    ]);
    expect(config.redis).toEqual({
      mode: 'sentinel',
      sentinels: [
        { host: 'sentinel-0.redis.svc', port: 26379 },
        { host: '10.0.0.7', port: 26380 },
        { host: 'fd00::7', port: 26381 },
      ],
      masterName: 'mymaster',
      password: 'pw',
      tls: false,
    });
    expect(
      load({ REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_MASTER: 'gateway.redis-1' }).redis,
    ).toMatchObject({ masterName: 'gateway.redis-1' });
    expect(
      ruleFor('REDIS_SENTINEL_MASTER', { REDIS_SENTINELS: 's:1', REDIS_SENTINEL_MASTER: 'a b' }),
    ).toBe('must be 1 to 64 letters, digits, `.`, `_` or `-`');
  });

  it('REDIS_CLUSTER_NODES is Cluster mode, each node once', () => {
    const config = load({
      REDIS_CLUSTER_NODES: 'redis-0:7000,redis-1:7001,redis-0:7000',
      REDIS_TLS: 'true',
    });
    expect(config.redisClusterNodes).toEqual(['redis-0:7000', 'redis-1:7001']);
    expect(config.redis).toEqual({
      mode: 'cluster',
      nodes: [
        { host: 'redis-0', port: 7000 },
        { host: 'redis-1', port: 7001 },
      ],
      password: undefined,
      tls: true,
    });
  });

  it.each([
    ['no port', 'redis-0'],
    ['port 0', 'redis-0:0'],
    ['port above 65535', 'redis-0:65536'],
    ['a URL', 'redis://redis-0:6379'],
    ['IPv6 without brackets', '::1:6379'],
    ['a bad IPv6 address', '[fd00::zz]:6379'],
    ['a bad host name', 'redis_0:6379'],
    ['a host name ending in a dash', 'redis-:6379'],
    ['only commas', ' , '],
    ['one bad entry of two', 'redis-0:6379,redis-1'],
  ])('REDIS_SENTINELS and REDIS_CLUSTER_NODES refuse %s', (_case, value) => {
    for (const name of ['REDIS_SENTINELS', 'REDIS_CLUSTER_NODES']) {
      expect(ruleFor(name, { [name]: value })).toMatch(
        /^must be a comma-separated list of host:port .*\((entry \d+ is not one|no entries given)\)$/,
      );
    }
  });

  it('refuses two ways of naming the Redis in one issue naming them, with every other bad variable', () => {
    const error = configError({
      IDENTITY_ISSUER: ISSUER,
      PORT: 'eighty',
      REDIS_URL: 'redis://cache:6379',
      REDIS_CLUSTER_NODES: 'redis-0:7000',
    });
    expect(error.variables).toEqual(['PORT', 'REDIS_URL', 'REDIS_CLUSTER_NODES']);
    expect(error.message).toContain(
      '  - REDIS_URL, REDIS_CLUSTER_NODES: are both set: set only one of REDIS_URL, ' +
        'REDIS_SENTINELS and REDIS_CLUSTER_NODES',
    );
    const all = configError({
      IDENTITY_ISSUER: ISSUER,
      REDIS_URL: 'redis://cache:6379',
      REDIS_SENTINELS: 'bad',
      REDIS_CLUSTER_NODES: 'redis-0:7000',
    });
    expect(all.variables).toEqual(['REDIS_URL', 'REDIS_SENTINELS', 'REDIS_CLUSTER_NODES']);
    expect(all.message).toContain('REDIS_URL, REDIS_SENTINELS, REDIS_CLUSTER_NODES: are all set');
    expect(all.message).toContain('REDIS_SENTINELS: must be a comma-separated list of host:port');
    // Blank values are unset: no conflict.
    expect(load({ REDIS_URL: 'redis://cache', REDIS_SENTINELS: ' ' }).redis?.mode).toBe('single');
  });

  it('REDIS_PASSWORD is refused beside a REDIS_URL that holds a password, without echoing either', () => {
    const error = configError({
      IDENTITY_ISSUER: ISSUER,
      REDIS_URL: 'redis://:Url-Pa55@cache:6379',
      REDIS_PASSWORD: 'Env-Pa55',
    });
    expect(error.variables).toEqual(['REDIS_PASSWORD']);
    expect(error.message).not.toMatch(/Url-Pa55|Env-Pa55/);
    expect(load({ REDIS_CLUSTER_NODES: 'r:1', REDIS_PASSWORD: 'x' }).redis?.password).toBe('x');
  });

  it('REDIS_TLS and REDIS_REQUIRE_PERSISTENCE take true or false', () => {
    expect(load({ REDIS_TLS: 'false', REDIS_REQUIRE_PERSISTENCE: 'true' })).toMatchObject({
      redisTls: false,
      redisRequirePersistence: true,
    });
    for (const name of ['REDIS_TLS', 'REDIS_REQUIRE_PERSISTENCE']) {
      expect(ruleFor(name, { [name]: 'yes' })).toBe('must be one of true, false');
    }
  });

  it('ADMIN_POWER_CONSOLE_ONLY is off by default and takes true or false', () => {
    expect(load({}).adminPowerConsoleOnly).toBe(false);
    expect(load({ ADMIN_POWER_CONSOLE_ONLY: 'true' }).adminPowerConsoleOnly).toBe(true);
    expect(load({ ADMIN_POWER_CONSOLE_ONLY: 'false' }).adminPowerConsoleOnly).toBe(false);
    expect(ruleFor('ADMIN_POWER_CONSOLE_ONLY', { ADMIN_POWER_CONSOLE_ONLY: 'yes' })).toBe(
      'must be one of true, false',
    );
  });

  it('passes plain strings through', () => {
    const config = load({
      IDENTITY_ACCESS_TOKEN_AUDIENCE: 'api://gateway',
      GATEWAY_DATA_DIR: '/var/lib/gateway',
      OTEL_SERVICE_NAME: 'gateway-edge',
    });
    expect(config.accessTokenAudience).toBe('api://gateway');
    expect(config.dataDir).toBe('/var/lib/gateway');
    expect(config.otelServiceName).toBe('gateway-edge');
  });
});

describe('AUTH_CALLBACK_URL and baseUrl', () => {
  it.each([
    ['https://gw.example.com/v1/auth/callback', 'https://gw.example.com'],
    ['https://example.com/gateway/v1/auth/callback', 'https://example.com/gateway'],
    ['http://localhost:9999/v1/auth/callback', 'http://localhost:9999'],
  ])('%s gives baseUrl %s', (callback, baseUrl) => {
    const config = load({ AUTH_CALLBACK_URL: callback });
    expect(config.authCallbackUrl).toBe(callback);
    expect(config.baseUrl).toBe(baseUrl);
  });

  it.each([
    'https://gw.example.com',
    'https://gw.example.com/v1/auth/callback/',
    'https://gw.example.com/v1/auth/logged-out',
    'https://gw.example.com/v1/auth/callback?x=1',
    'https://gw.example.com/v1/auth/callback#x',
    'ftp://gw.example.com/v1/auth/callback',
    'gw.example.com/v1/auth/callback',
  ])('rejects %s', (callback) => {
    ruleFor('AUTH_CALLBACK_URL', { AUTH_CALLBACK_URL: callback });
  });

  it('names the expected path in the rule', () => {
    expect(
      ruleFor('AUTH_CALLBACK_URL', { AUTH_CALLBACK_URL: 'https://gw.example.com/cb' }),
    ).toContain('/v1/auth/callback');
  });
});

describe('PLATFORM_ADMIN_BOOTSTRAP_EMAILS', () => {
  it('is trimmed, lower-cased, with empty entries dropped', () => {
    const config = load({
      PLATFORM_ADMIN_BOOTSTRAP_EMAILS: ' Admin@Example.COM, ,ops@example.com,, root@localhost ,',
    });
    expect(config.platformAdminBootstrapEmails).toEqual([
      'admin@example.com',
      'ops@example.com',
      'root@localhost',
    ]);
  });

  it.each([
    'admin',
    'admin@',
    '@example.com',
    'a b@example.com',
    'a@b@example.com',
    'a@example..com',
  ])('rejects %s, pointing at the entry by position', (bad) => {
    const rule = ruleFor('PLATFORM_ADMIN_BOOTSTRAP_EMAILS', {
      PLATFORM_ADMIN_BOOTSTRAP_EMAILS: `ok@example.com,${bad}`,
    });
    expect(rule).toContain('entry 2');
    expect(rule).not.toContain(bad);
  });
});

describe('CORS_ORIGINS', () => {
  it('normalises each entry to its origin', () => {
    const config = load({
      CORS_ORIGINS: 'https://App.Example.com/, http://localhost:3000 ,https://x.example.com:443,,',
    });
    expect(config.corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:3000',
      'https://x.example.com',
    ]);
  });

  it.each([
    ['a path', 'https://app.example.com/app', 'has a path'],
    ['a query', 'https://app.example.com/?a=1', 'has a query'],
    ['a fragment', 'https://app.example.com#top', 'has a query or fragment'],
    ['credentials', 'https://u:p@app.example.com', 'has a username or password'],
    ['a wildcard', '*', 'is not an http(s) URL'],
    ['a host without scheme', 'app.example.com', 'is not an http(s) URL'],
    ['another scheme', 'ftp://app.example.com', 'is not an http(s) URL'],
  ])('rejects an entry with %s', (_label, bad, problem) => {
    const rule = ruleFor('CORS_ORIGINS', { CORS_ORIGINS: `https://ok.example.com,${bad}` });
    expect(rule).toContain(`entry 2 ${problem}`);
  });
});

describe('GATEWAY_ENCRYPTION_KEYS', () => {
  it('keeps a valid spec as written', () => {
    const spec = `k2:${keyText()},k1:${keyText()}`;
    expect(load({ GATEWAY_ENCRYPTION_KEYS: spec }).encryptionKeys).toBe(spec);
  });

  it.each([
    ['a short key', () => `k1:${keyText(16)}`, 'entry 1 has 16 bytes'],
    ['a missing id', () => `k1:${keyText()},${keyText()}`, 'entry 2 has no valid id'],
    ['a bad id', () => `k.1:${keyText()}`, 'entry 1 has no valid id'],
    ['standard base64', () => `k1:+${keyText().slice(1)}`, 'entry 1 is not base64url'],
    ['a duplicate id', () => `k1:${keyText()},k1:${keyText()}`, 'entry 2 repeats an earlier id'],
    ['only commas', () => ',,', 'no keys given'],
  ])('rejects a spec with %s without echoing it', (_label, makeSpec, problem) => {
    const spec = makeSpec();
    const error = configError({ IDENTITY_ISSUER: ISSUER, GATEWAY_ENCRYPTION_KEYS: spec });
    expect(error.variables).toEqual(['GATEWAY_ENCRYPTION_KEYS']);
    expect(error.message).toContain(problem);
    for (const entry of spec.split(',').filter((part) => part.length > 8)) {
      expect(error.message).not.toContain(entry.slice(-10));
    }
  });
});

describe('ConfigError', () => {
  it('lists every bad variable by name, in one error', () => {
    const error = configError({
      PORT: 'eighty',
      AUTH_HANDOFF_TTL_SECONDS: '1000',
      CORS_ORIGINS: 'https://a.example.com/path',
      LOG_LEVEL: 'loud',
    });
    expect(error.variables).toEqual([
      'PORT',
      'LOG_LEVEL',
      'IDENTITY_ISSUER',
      'AUTH_HANDOFF_TTL_SECONDS',
      'CORS_ORIGINS',
    ]);
    expect(error.message).toContain('AUTH_HANDOFF_TTL_SECONDS: must be an integer from 30 to 300');
    expect(error.message).toContain('PORT: must be an integer from 1 to 65535');
    expect(error.name).toBe('ConfigError');
    expect(error).toBeInstanceOf(Error);
  });

  it('never contains the received value of any variable', () => {
    const values: NodeJS.ProcessEnv = {
      IDENTITY_ISSUER: 'http://leak-issuer.example.com',
      PORT: 'leakport',
      IDENTITY_SERVICE_KEY: 'K3y-10char',
      IDENTITY_ENVIRONMENT_SECRET_KEY: 'EnvSecret-9',
      DATABASE_URL: 'mysql://dbuser:Db-Pa55word@db/gw',
      REDIS_URL: 'http://:Redis-Pa55@cache',
      GATEWAY_ENCRYPTION_KEYS: 'kid1:Sh0rtKeyMaterial',
      IDENTITY_OIDC_CLIENT_ID: 'leak client id',
      CORS_ORIGINS: 'https://leak-origin.example.com/path',
      PLATFORM_ADMIN_BOOTSTRAP_EMAILS: 'leak-not-an-email',
    };
    const error = configError(values);
    expect(error.variables).toHaveLength(Object.keys(values).length);
    for (const value of Object.values(values)) expect(error.message).not.toContain(value);
    for (const fragment of [
      'K3y-10char',
      'Db-Pa55word',
      'Redis-Pa55',
      'Sh0rtKeyMaterial',
      'leak',
    ]) {
      expect(error.message).not.toContain(fragment);
      expect(JSON.stringify(error.issues)).not.toContain(fragment);
    }
  });
});

describe('requireConfigValues', () => {
  const config = load({
    GATEWAY_ENCRYPTION_KEYS: `k1:${keyText()}`,
    REGISTRY_SERVICE_URL: 'http://registry:8081',
  });

  it('passes when every listed variable is set', () => {
    expect(() =>
      requireConfigValues(config, ['GATEWAY_ENCRYPTION_KEYS', 'REGISTRY_SERVICE_URL', 'PORT']),
    ).not.toThrow();
  });

  it('names each unset variable', () => {
    let caught: unknown;
    try {
      requireConfigValues(config, [
        'GATEWAY_ENCRYPTION_KEYS',
        'AUTH_FLOW_SERVICE_URL',
        'ONBOARDING_SERVICE_URL',
        'CORS_ORIGINS',
      ]);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const error = caught as ConfigError;
    expect(error.variables).toEqual([
      'AUTH_FLOW_SERVICE_URL',
      'ONBOARDING_SERVICE_URL',
      'CORS_ORIGINS',
    ]);
    expect(error.message).toContain('AUTH_FLOW_SERVICE_URL: is required');
  });

  it('takes REDIS_SENTINELS or REDIS_CLUSTER_NODES for a required REDIS_URL, and says so when none is set', () => {
    const sentinel = load({ REDIS_SENTINELS: 's:26379' });
    expect(() => requireConfigValues(sentinel, ['REDIS_URL'])).not.toThrow();
    const cluster = load({ REDIS_CLUSTER_NODES: 'r:7000' });
    expect(() => requireConfigValues(cluster, ['REDIS_URL'])).not.toThrow();
    expect(() => requireConfigValues(config, ['REDIS_URL'])).toThrow(
      'REDIS_URL: is required by this process but is not set (nor is REDIS_SENTINELS or ' +
        'REDIS_CLUSTER_NODES, which may stand for it)',
    );
    expect(() =>
      loadConfig(
        { IDENTITY_ISSUER: ISSUER, REDIS_CLUSTER_NODES: 'r:7000' },
        { require: ['REDIS_URL'] },
      ),
    ).not.toThrow();
    // Also when another variable is bad (the configuration is not built then).
    let caught: unknown;
    try {
      loadConfig(
        { IDENTITY_ISSUER: ISSUER, PORT: 'x', REDIS_SENTINELS: 's:1' },
        { require: ['REDIS_URL'] },
      );
    } catch (error) {
      caught = error;
    }
    expect((caught as ConfigError).variables).toEqual(['PORT']);
  });

  it('accepts names held in a plain string array and rejects unknown names', () => {
    const names: string[] = ['REGISTRY_SERVICE_URL'];
    expect(() => requireConfigValues(config, names)).not.toThrow();
    expect(() => requireConfigValues(config, ['NOT_A_VARIABLE'])).toThrow(TypeError);
  });
});

describe('loadConfig with required variables and issues of the caller', () => {
  const errorOf = (run: () => unknown): ConfigError => {
    try {
      run();
    } catch (error) {
      if (error instanceof ConfigError) return error;
      throw error;
    }
    throw new Error('expected a ConfigError');
  };

  it('names every missing variable in one error, in the order of the configuration table', () => {
    const error = errorOf(() => loadConfig({}, { require: ['GATEWAY_ENCRYPTION_KEYS'] }));
    expect(error.variables).toEqual(['IDENTITY_ISSUER', 'GATEWAY_ENCRYPTION_KEYS']);
    expect(error.message.match(/Invalid configuration:/g)).toHaveLength(1);
  });

  it('lists bad values, missing required variables and the caller issues together', () => {
    const error = errorOf(() =>
      loadConfig(
        { IDENTITY_ISSUER: 'https://id.example.com', PORT: 'abc', GATEWAY_ENCRYPTION_KEYS: ' ' },
        {
          require: ['GATEWAY_ENCRYPTION_KEYS'],
          issues: [{ variable: 'DEMO_PLATFORM_PORT', rule: 'must be an integer from 1 to 65535' }],
        },
      ),
    );
    expect(error.variables).toEqual(['PORT', 'GATEWAY_ENCRYPTION_KEYS', 'DEMO_PLATFORM_PORT']);
  });

  it('reports a required variable that has a bad value once, with its rule', () => {
    const error = errorOf(() =>
      loadConfig(
        { IDENTITY_ISSUER: 'https://id.example.com', GATEWAY_ENCRYPTION_KEYS: 'nope' },
        { require: ['GATEWAY_ENCRYPTION_KEYS'] },
      ),
    );
    expect(error.variables).toEqual(['GATEWAY_ENCRYPTION_KEYS']);
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]?.rule).not.toContain('is required');
  });

  it('returns the configuration when every required variable is set', () => {
    const keys = `k1:${keyText()}`;
    const config = loadConfig(
      { IDENTITY_ISSUER: 'https://id.example.com', GATEWAY_ENCRYPTION_KEYS: keys },
      { require: ['GATEWAY_ENCRYPTION_KEYS'] },
    );
    expect(config.encryptionKeys).toBe(keys);
  });
});
