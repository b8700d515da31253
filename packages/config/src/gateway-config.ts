import type { GatewayEnv } from './env-schema.js';
import { toRedisSettings } from './redis-settings.js';
import type { RedisSettings } from './redis-settings.js';
import { baseUrlOfCallback, CALLBACK_PATH } from './value-rules.js';

export type NodeEnv = GatewayEnv['NODE_ENV'];
export type LogLevel = GatewayEnv['LOG_LEVEL'];
export type LogFormat = NonNullable<GatewayEnv['LOG_FORMAT']>;

/** The validated configuration, parsed once at start. Values are already converted. */
export type GatewayConfig = {
  readonly port: number;
  readonly nodeEnv: NodeEnv;
  /** NODE_ENV is production: Secure cookies, HSTS. */
  readonly production: boolean;
  readonly logLevel: LogLevel;
  /** Unset: the process chooses (pretty on a development terminal, JSON otherwise). */
  readonly logFormat: LogFormat | undefined;
  /** Deployment issuer without a trailing `/`. */
  readonly identityIssuer: string;
  /** Tier of the deployment (PROD) identity environment; production requires public HTTPS platform URLs. */
  readonly identityDeploymentTier: 'development' | 'staging' | 'production';
  readonly identityOidcClientId: string | undefined;
  readonly identityOidcClientSecret: string | undefined;
  /** Unset means ACCOUNT_CENTER_URL. */
  readonly identityPostLogoutRedirectUri: string | undefined;
  readonly accountCenterUrl: string | undefined;
  readonly accessTokenAudience: string;
  /** Longest accepted lifetime (`exp` - `iat`) of a Bearer access token. */
  readonly accessTokenMaxLifetimeSeconds: number;
  readonly identityEnvironmentSecretKey: string | undefined;
  readonly identityServiceUrl: string | undefined;
  readonly identityServiceKey: string | undefined;
  /** Lower-cased e-mail addresses. */
  readonly platformAdminBootstrapEmails: readonly string[];
  /**
   * Hardening beyond the spec: only sessions created through an admin console platform (or
   * at the gateway itself) carry their user's permissions.
   */
  readonly adminPowerConsoleOnly: boolean;
  /** `{baseUrl}/v1/auth/callback`, exactly as configured. */
  readonly authCallbackUrl: string;
  /** The callback URL without `/v1/auth/callback`, no trailing `/`. */
  readonly baseUrl: string;
  readonly authHandoffTtlSeconds: number;
  /** Origins as `new URL(x).origin`. */
  readonly corsOrigins: readonly string[];
  /** Unset means embedded PGlite in dataDir. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  /** REDIS_URL as written; connect through `redis`, which covers every mode. */
  readonly redisUrl: string | undefined;
  /** REDIS_SENTINELS as written (`host:port`); connect through `redis`. */
  readonly redisSentinels: readonly string[];
  readonly redisSentinelMaster: string;
  /** REDIS_CLUSTER_NODES as written (`host:port`); connect through `redis`. */
  readonly redisClusterNodes: readonly string[];
  readonly redisPassword: string | undefined;
  readonly redisTls: boolean;
  /**
   * The Redis to connect to, from REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES with the
   * password and TLS settings. Unset means the SQL store.
   */
  readonly redis: RedisSettings | undefined;
  /** In production, refuse to start on a Redis that would lose sessions in a restart. */
  readonly redisRequirePersistence: boolean;
  /** Prefix of every Redis key, so several gateways (or test files) can share one Redis. */
  readonly redisKeyPrefix: string;
  readonly registryServiceUrl: string | undefined;
  readonly authFlowServiceUrl: string | undefined;
  readonly onboardingServiceUrl: string | undefined;
  /** Raw keyring spec; parse it with @gateway/crypto parseEncryptionKeys. */
  readonly encryptionKeys: string | undefined;
  readonly serviceCallTimeoutMs: number;
  readonly databaseTimeoutMs: number;
  readonly otlpEndpoint: string | undefined;
  readonly otelServiceName: string | undefined;
  /** Port of the Prometheus `/metrics` endpoint; undefined: no endpoint. */
  readonly metricsPort: number | undefined;
  /** Reverse proxies whose X-Forwarded-* headers are trusted (Express `trust proxy`). */
  readonly trustedProxies: readonly string[];
  /** Rate limits: requests per window (0 turns a limit off); see docs/decisions.md. */
  readonly rateLimitWindowSeconds: number;
  /** Window of the aggregated `platform.authentication_failed` audit records. */
  readonly platformAuthFailureWindowSeconds: number;
  readonly rateLimitBrowserPerIp: number;
  readonly rateLimitExchangePerClient: number;
  readonly rateLimitIntrospectPerClient: number;
  readonly rateLimitServerPerIp: number;
  /** Load shedding: start/exchange/introspect requests in flight beyond which the edge answers 503 (0: never). */
  readonly overloadMaxInFlight: number;
};

/** Turns the parsed environment into a GatewayConfig (derived values included), frozen. */
export function toGatewayConfig(env: GatewayEnv): GatewayConfig {
  const authCallbackUrl = env.AUTH_CALLBACK_URL ?? `http://localhost:${env.PORT}${CALLBACK_PATH}`;
  return Object.freeze({
    port: env.PORT,
    nodeEnv: env.NODE_ENV,
    production: env.NODE_ENV === 'production',
    logLevel: env.LOG_LEVEL,
    logFormat: env.LOG_FORMAT,
    identityIssuer: env.IDENTITY_ISSUER,
    identityDeploymentTier: env.IDENTITY_DEPLOYMENT_TIER,
    identityOidcClientId: env.IDENTITY_OIDC_CLIENT_ID,
    identityOidcClientSecret: env.IDENTITY_OIDC_CLIENT_SECRET,
    identityPostLogoutRedirectUri: env.IDENTITY_POST_LOGOUT_REDIRECT_URI,
    accountCenterUrl: env.ACCOUNT_CENTER_URL,
    accessTokenAudience: env.IDENTITY_ACCESS_TOKEN_AUDIENCE,
    accessTokenMaxLifetimeSeconds: env.ACCESS_TOKEN_MAX_LIFETIME_SECONDS,
    identityEnvironmentSecretKey: env.IDENTITY_ENVIRONMENT_SECRET_KEY,
    identityServiceUrl: env.IDENTITY_SERVICE_URL,
    identityServiceKey: env.IDENTITY_SERVICE_KEY,
    platformAdminBootstrapEmails: Object.freeze(env.PLATFORM_ADMIN_BOOTSTRAP_EMAILS),
    adminPowerConsoleOnly: env.ADMIN_POWER_CONSOLE_ONLY,
    authCallbackUrl,
    baseUrl: baseUrlOfCallback(authCallbackUrl),
    authHandoffTtlSeconds: env.AUTH_HANDOFF_TTL_SECONDS,
    corsOrigins: Object.freeze(env.CORS_ORIGINS),
    databaseUrl: env.DATABASE_URL,
    dataDir: env.GATEWAY_DATA_DIR,
    redisUrl: env.REDIS_URL,
    redisSentinels: Object.freeze(env.REDIS_SENTINELS),
    redisSentinelMaster: env.REDIS_SENTINEL_MASTER,
    redisClusterNodes: Object.freeze(env.REDIS_CLUSTER_NODES),
    redisPassword: env.REDIS_PASSWORD,
    redisTls: env.REDIS_TLS,
    redis: toRedisSettings(env),
    redisRequirePersistence: env.REDIS_REQUIRE_PERSISTENCE,
    redisKeyPrefix: env.REDIS_KEY_PREFIX,
    registryServiceUrl: env.REGISTRY_SERVICE_URL,
    authFlowServiceUrl: env.AUTH_FLOW_SERVICE_URL,
    onboardingServiceUrl: env.ONBOARDING_SERVICE_URL,
    encryptionKeys: env.GATEWAY_ENCRYPTION_KEYS,
    serviceCallTimeoutMs: env.SERVICE_CALL_TIMEOUT_MS,
    databaseTimeoutMs: env.DATABASE_TIMEOUT_MS,
    otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT,
    otelServiceName: env.OTEL_SERVICE_NAME,
    metricsPort: env.METRICS_PORT,
    trustedProxies: Object.freeze(env.TRUSTED_PROXIES),
    rateLimitWindowSeconds: env.RATE_LIMIT_WINDOW_SECONDS,
    platformAuthFailureWindowSeconds: env.PLATFORM_AUTH_FAILURE_WINDOW_SECONDS,
    rateLimitBrowserPerIp: env.RATE_LIMIT_BROWSER_PER_IP,
    rateLimitExchangePerClient: env.RATE_LIMIT_EXCHANGE_PER_CLIENT,
    rateLimitIntrospectPerClient: env.RATE_LIMIT_INTROSPECT_PER_CLIENT,
    rateLimitServerPerIp: env.RATE_LIMIT_SERVER_PER_IP,
    overloadMaxInFlight: env.OVERLOAD_MAX_IN_FLIGHT,
  });
}
