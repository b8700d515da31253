import type { GatewayEnvName } from './env-schema.js';
import type { GatewayConfig } from './gateway-config.js';

/** The README's run commands (`npx -y pnpm@10.34.9 <command>`). */
export const RUN_COMMANDS = ['start', 'start:gateway', 'start:split'] as const;
export type RunCommand = (typeof RUN_COMMANDS)[number];

/** Documentation of one configuration variable; the README table is generated from these. */
export type ConfigVariable = {
  readonly name: GatewayEnvName;
  /** The GatewayConfig field holding the converted value. */
  readonly field: keyof GatewayConfig;
  readonly description: string;
  /** Default as written in documentation; absent when unset means "not configured". */
  readonly default?: string;
  /** The schema has no default: every process stops without it unless its command sets one. */
  readonly required: boolean;
  /** The run commands that stop without it (`start` and `start:split` derive or generate the rest). */
  readonly requiredBy: readonly RunCommand[];
  /** Never logged and never echoed in error messages. */
  readonly secret: boolean;
  /**
   * Variables that name the same thing another way: a process that requires this variable
   * accepts any one of them instead (REDIS_URL, REDIS_SENTINELS, REDIS_CLUSTER_NODES).
   */
  readonly alternatives: readonly GatewayEnvName[];
};

const variable = (
  name: GatewayEnvName,
  field: keyof GatewayConfig,
  description: string,
  options: {
    default?: string;
    required?: boolean;
    requiredBy?: readonly RunCommand[];
    secret?: boolean;
    alternatives?: readonly GatewayEnvName[];
  } = {},
): ConfigVariable =>
  Object.freeze({
    name,
    field,
    description,
    ...(options.default === undefined ? {} : { default: options.default }),
    required: options.required ?? false,
    requiredBy: Object.freeze([...(options.requiredBy ?? [])]),
    secret: options.secret ?? false,
    alternatives: Object.freeze([...(options.alternatives ?? [])]),
  });

export const configVariables: readonly ConfigVariable[] = Object.freeze([
  variable('PORT', 'port', 'HTTP port the gateway listens on (1 to 65535).', { default: '8080' }),
  variable(
    'NODE_ENV',
    'nodeEnv',
    '`production`, `development` or `test`. `production` turns on Secure cookies and HSTS.',
    { default: 'development' },
  ),
  variable(
    'LOG_LEVEL',
    'logLevel',
    'Log level: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`.',
    { default: 'info' },
  ),
  variable(
    'LOG_FORMAT',
    'logFormat',
    'Log format of `start` and `start:gateway`: `json` (one object per line) or `pretty` ' +
      '(coloured lines to read; request lines only at LOG_LEVEL `debug` or `trace`). Unset: ' +
      '`pretty` when NODE_ENV is `development` and stdout is a terminal, otherwise `json`.',
  ),
  variable(
    'IDENTITY_ISSUER',
    'identityIssuer',
    'Deployment issuer (HTTPS; HTTP only for localhost, 127.0.0.1, [::1] and *.localhost). ' +
      'No query, fragment or credentials; a trailing `/` is removed. `start` and `start:split` ' +
      'default to `http://localhost:<PORT>/api/auth/env/PROD`.',
    { required: true, requiredBy: ['start:gateway'] },
  ),
  variable(
    'IDENTITY_DEPLOYMENT_TIER',
    'identityDeploymentTier',
    'Tier of the deployment (`PROD`) identity environment: `development`, `staging` or ' +
      '`production`. Production-tier environments require public HTTPS platform URLs.',
    { default: 'production' },
  ),
  variable(
    'IDENTITY_OIDC_CLIENT_ID',
    'identityOidcClientId',
    "Client ID of the gateway's OIDC client in the deployment environment " +
      '(`^[0-9A-Za-z@._~-]{1,128}$`).',
  ),
  variable(
    'IDENTITY_OIDC_CLIENT_SECRET',
    'identityOidcClientSecret',
    "Client secret of the gateway's OIDC client in the deployment environment.",
    { secret: true },
  ),
  variable(
    'IDENTITY_POST_LOGOUT_REDIRECT_URI',
    'identityPostLogoutRedirectUri',
    'Where deployment-environment logout returns when the session has no platform. ' +
      'Empty means ACCOUNT_CENTER_URL.',
  ),
  variable('ACCOUNT_CENTER_URL', 'accountCenterUrl', 'Fallback post-logout destination.'),
  variable(
    'IDENTITY_ACCESS_TOKEN_AUDIENCE',
    'accessTokenAudience',
    'Required `aud` of Bearer access tokens.',
    { default: 'http://localhost:8080' },
  ),
  variable(
    'ACCESS_TOKEN_MAX_LIFETIME_SECONDS',
    'accessTokenMaxLifetimeSeconds',
    'Longest lifetime (`exp` minus `iat`) of an accepted Bearer access token, in seconds, ' +
      'allowed 60 to 31536000. Longer-lived tokens are refused (401).',
    { default: '86400' },
  ),
  variable(
    'IDENTITY_ENVIRONMENT_SECRET_KEY',
    'identityEnvironmentSecretKey',
    'At least 32 characters. Encrypts client secrets of database environments; changing it ' +
      'makes stored secrets unreadable until each is re-entered.',
    { secret: true },
  ),
  variable(
    'IDENTITY_SERVICE_URL',
    'identityServiceUrl',
    'Internal identity service API address (http(s) URL).',
  ),
  variable(
    'IDENTITY_SERVICE_KEY',
    'identityServiceKey',
    'Signing key for calls to the internal identity service API (at least 32 characters).',
    { secret: true },
  ),
  variable(
    'PLATFORM_ADMIN_BOOTSTRAP_EMAILS',
    'platformAdminBootstrapEmails',
    'Comma-separated, case-insensitive e-mail list. Each verified address becomes ' +
      '`platform_admin` on deployment-environment login.',
  ),
  variable(
    'ADMIN_POWER_CONSOLE_ONLY',
    'adminPowerConsoleOnly',
    '`true`: only sessions signed in through an admin console platform (`adminConsole`) carry ' +
      "their user's permissions. `false`: every deployment session carries its snapshot (spec " +
      '2.6). `true` is the hardening for production (docs/operations.md).',
    { default: 'false' },
  ),
  variable(
    'AUTH_CALLBACK_URL',
    'authCallbackUrl',
    "The gateway callback, `{base_url}/v1/auth/callback`. Redirect URI of every environment's " +
      'gateway client; `{base_url}` is derived from it.',
    { default: 'http://localhost:<PORT>/v1/auth/callback' },
  ),
  variable(
    'AUTH_HANDOFF_TTL_SECONDS',
    'authHandoffTtlSeconds',
    'Handoff lifetime in seconds, allowed 30 to 300.',
    { default: '60' },
  ),
  variable(
    'CORS_ORIGINS',
    'corsOrigins',
    'Comma-separated origins (`scheme://host[:port]`) allowed for credentialed CORS and ' +
      "cookie-write `Origin`. Issuer hosts and active platforms' return-URL origins are added " +
      'automatically.',
  ),
  variable(
    'DATABASE_URL',
    'databaseUrl',
    'PostgreSQL connection URL (`postgres://` or `postgresql://`). Unset: embedded PGlite in ' +
      'GATEWAY_DATA_DIR.',
    { secret: true },
  ),
  variable(
    'GATEWAY_DATA_DIR',
    'dataDir',
    'Folder for the embedded PGlite database and generated embedded keys.',
    { default: '.gateway-data' },
  ),
  variable(
    'REDIS_URL',
    'redisUrl',
    'URL (`redis://` or `rediss://`, which turns on TLS) of one Redis server for short-lived ' +
      'state. Set at most one of REDIS_URL, REDIS_SENTINELS and REDIS_CLUSTER_NODES; none: the ' +
      'SQL store is used.',
    { secret: true, alternatives: ['REDIS_SENTINELS', 'REDIS_CLUSTER_NODES'] },
  ),
  variable(
    'REDIS_SENTINELS',
    'redisSentinels',
    'Redis Sentinel mode: comma-separated `host:port` of the Sentinels, which name the master ' +
      'REDIS_SENTINEL_MASTER; the gateway follows its failovers.',
    { alternatives: ['REDIS_URL', 'REDIS_CLUSTER_NODES'] },
  ),
  variable(
    'REDIS_SENTINEL_MASTER',
    'redisSentinelMaster',
    'Name of the master the Sentinels watch (letters, digits, `.`, `_`, `-`; at most 64).',
    { default: 'mymaster' },
  ),
  variable(
    'REDIS_CLUSTER_NODES',
    'redisClusterNodes',
    'Redis Cluster mode: comma-separated `host:port` of some nodes of the cluster; the gateway ' +
      'discovers the others and follows slot moves and failovers.',
    { alternatives: ['REDIS_URL', 'REDIS_SENTINELS'] },
  ),
  variable(
    'REDIS_PASSWORD',
    'redisPassword',
    'Password of every Redis node, and of the Sentinels in Sentinel mode. Unset: the password ' +
      'of REDIS_URL, if any (setting both is refused).',
    { secret: true },
  ),
  variable(
    'REDIS_TLS',
    'redisTls',
    '`true`: TLS to every Redis node, and to the Sentinels in Sentinel mode (certificates are ' +
      'verified; NODE_EXTRA_CA_CERTS adds a private CA). A `rediss://` REDIS_URL turns it on too.',
    { default: 'false' },
  ),
  variable(
    'REDIS_REQUIRE_PERSISTENCE',
    'redisRequirePersistence',
    '`true`: with NODE_ENV `production`, a process keeping sessions in Redis refuses to start ' +
      'unless that Redis is known to keep them over a restart (AOF or RDB files, replicas, ' +
      'Sentinel or Cluster). `false`: it logs a warning instead (docs/operations.md).',
    { default: 'false' },
  ),
  variable(
    'REDIS_KEY_PREFIX',
    'redisKeyPrefix',
    'Prefix of every Redis key (letters, digits, `:`, `_`, `-`; at most 64), so several ' +
      'gateways can share one Redis.',
    { default: '' },
  ),
  variable(
    'REGISTRY_SERVICE_URL',
    'registryServiceUrl',
    'Split mode: HTTP/2 address where the edge reaches the registry service.',
  ),
  variable(
    'AUTH_FLOW_SERVICE_URL',
    'authFlowServiceUrl',
    'Split mode: HTTP/2 address where the edge reaches the auth-flow service.',
  ),
  variable(
    'ONBOARDING_SERVICE_URL',
    'onboardingServiceUrl',
    'Split mode: HTTP/2 address where the edge reaches the onboarding service.',
  ),
  variable(
    'GATEWAY_ENCRYPTION_KEYS',
    'encryptionKeys',
    'AES-256-GCM keys for reversible secrets, `<id>:<base64url 32-byte key>[,<id>:<key>...]`. ' +
      'The first key encrypts; the others only decrypt older data (rotation). `start` generates ' +
      'one into GATEWAY_DATA_DIR; `start:split` generates a throwaway one per run.',
    { secret: true, requiredBy: ['start:gateway'] },
  ),
  variable(
    'SERVICE_CALL_TIMEOUT_MS',
    'serviceCallTimeoutMs',
    'Deadline of edge-to-service calls in milliseconds (100 to 60000).',
    { default: '5000' },
  ),
  variable(
    'DATABASE_TIMEOUT_MS',
    'databaseTimeoutMs',
    'Time-out of database operations in milliseconds (100 to 60000).',
    { default: '5000' },
  ),
  variable(
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'otlpEndpoint',
    'OpenTelemetry OTLP exporter endpoint (http(s) URL).',
  ),
  variable('OTEL_SERVICE_NAME', 'otelServiceName', 'Service name reported to OpenTelemetry.'),
  variable(
    'METRICS_PORT',
    'metricsPort',
    'Port (1 to 65535) of a separate HTTP listener serving the metrics in the Prometheus text ' +
      'format at `/metrics`; it must differ from PORT. Unset: no Prometheus endpoint (metrics ' +
      'still go over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set).',
  ),
  variable(
    'TRUSTED_PROXIES',
    'trustedProxies',
    'Reverse proxies whose `X-Forwarded-For`/`-Proto`/`-Host` are believed: IP addresses, CIDR ' +
      'blocks or `loopback`, `linklocal`, `uniquelocal`, comma-separated. Unset: none, the ' +
      "client address is the connection's.",
  ),
  variable(
    'RATE_LIMIT_WINDOW_SECONDS',
    'rateLimitWindowSeconds',
    'Window of every rate limit in seconds (1 to 3600). Counters are shared through Redis when ' +
      'one is configured, otherwise kept per process.',
    { default: '60' },
  ),
  variable(
    'PLATFORM_AUTH_FAILURE_WINDOW_SECONDS',
    'platformAuthFailureWindowSeconds',
    'Window in seconds (1 to 3600) over which each edge counts refused platform credentials ' +
      'before writing one `platform.authentication_failed` audit record per client id (or ' +
      'source address) with the count.',
    { default: '60' },
  ),
  variable(
    'RATE_LIMIT_BROWSER_PER_IP',
    'rateLimitBrowserPerIp',
    'Start and callback requests per client IP address and window (0: no limit).',
    { default: '300' },
  ),
  variable(
    'RATE_LIMIT_EXCHANGE_PER_CLIENT',
    'rateLimitExchangePerClient',
    'Exchange requests per presented platform credential and window (0: no limit).',
    { default: '600' },
  ),
  variable(
    'RATE_LIMIT_INTROSPECT_PER_CLIENT',
    'rateLimitIntrospectPerClient',
    'Introspect requests per presented platform credential and window (0: no limit).',
    { default: '60000' },
  ),
  variable(
    'RATE_LIMIT_SERVER_PER_IP',
    'rateLimitServerPerIp',
    'Exchange and introspect requests per client IP address and window (0: no limit).',
    { default: '120000' },
  ),
  variable(
    'OVERLOAD_MAX_IN_FLIGHT',
    'overloadMaxInFlight',
    'Load shedding of the edge: while this many start, exchange and introspect requests are ' +
      'in flight, further ones are answered 503 SERVICE_UNAVAILABLE with `Retry-After: 1` at ' +
      'once instead of queueing (0: never).',
    { default: '100' },
  ),
]);

/**
 * GatewayConfig fields computed from several variables, with those variables: code that reads
 * `config.redis` reads every Redis connection variable.
 */
export const derivedConfigFields: Readonly<
  Partial<Record<keyof GatewayConfig, readonly GatewayEnvName[]>>
> = Object.freeze({
  production: Object.freeze(['NODE_ENV'] as const),
  baseUrl: Object.freeze(['AUTH_CALLBACK_URL', 'PORT'] as const),
  redis: Object.freeze([
    'REDIS_URL',
    'REDIS_SENTINELS',
    'REDIS_SENTINEL_MASTER',
    'REDIS_CLUSTER_NODES',
    'REDIS_PASSWORD',
    'REDIS_TLS',
  ] as const),
});

/** The variables `command` stops without. */
export function variablesRequiredBy(command: RunCommand): GatewayEnvName[] {
  return configVariables
    .filter((entry) => entry.requiredBy.includes(command))
    .map((entry) => entry.name);
}

/** Names of the variables whose values are secret. */
export const secretConfigVariableNames: readonly GatewayEnvName[] = Object.freeze(
  configVariables.filter((entry) => entry.secret).map((entry) => entry.name),
);
