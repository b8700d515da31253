import { z } from 'zod';
import {
  checkCallbackUrl,
  checkEmailList,
  checkEncryptionKeySpec,
  checkHttpUrl,
  checkInteger,
  checkIssuer,
  checkMinLength,
  checkOriginList,
  checkProxyList,
  checkUrlWithScheme,
} from './value-rules.js';
import type { Checked } from './value-rules.js';
import {
  checkHostPortList,
  HOST_PORT_LIST_RULE,
  SENTINEL_MASTER_PATTERN,
  SENTINEL_MASTER_RULE,
} from './redis-settings.js';

// Empty (or blank) values count as unset everywhere: docker-compose and Helm often pass `VAR=`.
// Non-secret values are trimmed; secret values are kept byte for byte.
const trimmedOrUnset = (value: unknown): unknown =>
  typeof value === 'string' ? (value.trim() === '' ? undefined : value.trim()) : value;
const verbatimOrUnset = (value: unknown): unknown =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

/** A string variable whose value is checked (and converted) by a rule function. */
function checked<T>(check: (raw: string) => Checked<T>, typeRule: string) {
  return z.string({ error: typeRule }).transform((raw, ctx): T => {
    const result = check(raw);
    if (result.ok) return result.value;
    ctx.issues.push({ code: 'custom', message: result.rule, input: raw });
    return z.NEVER;
  });
}

const integer = (min: number, max: number) =>
  checked((raw) => checkInteger(raw, min, max), `must be an integer from ${min} to ${max}`);
const httpUrl = () => checked(checkHttpUrl, 'must be an absolute http:// or https:// URL');
const minLength = (min: number) =>
  checked((raw) => checkMinLength(raw, min), `must be at least ${min} characters`);
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `must be one of ${values.join(', ')}` });
const flag = () => oneOf(['true', 'false']).transform((value) => value === 'true');
const hostPortList = () => checked(checkHostPortList, HOST_PORT_LIST_RULE);

/** Trims the value and treats blank as unset before `schema` sees it. */
const trimmed = <T extends z.ZodType>(schema: T) => z.preprocess(trimmedOrUnset, schema);
const optional = <T extends z.ZodType>(schema: T) => trimmed(schema.optional());
const optionalSecret = <T extends z.ZodType>(schema: T) =>
  z.preprocess(verbatimOrUnset, schema.optional());

const POSTGRES_RULE = 'must be a postgres:// or postgresql:// URL';
const REDIS_RULE = 'must be a redis:// or rediss:// URL';
const REDIS_KEY_PREFIX_RULE = 'must be 1 to 64 letters, digits, `:`, `_` or `-`';

export const IDENTITY_TIERS = ['development', 'staging', 'production'] as const;
export const NODE_ENVS = ['production', 'development', 'test'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const LOG_FORMATS = ['json', 'pretty'] as const;
export const OIDC_CLIENT_ID_PATTERN = /^[0-9A-Za-z@._~-]{1,128}$/;

/**
 * The environment of every gateway process, keyed by variable name. Unknown variables are
 * ignored. loadConfig turns the parsed result into a GatewayConfig.
 */
export const gatewayEnvSchema = z.object({
  PORT: trimmed(integer(1, 65535).default(8080)),
  NODE_ENV: trimmed(oneOf(NODE_ENVS).default('development')),
  LOG_LEVEL: trimmed(oneOf(LOG_LEVELS).default('info')),
  LOG_FORMAT: optional(oneOf(LOG_FORMATS)),
  IDENTITY_ISSUER: trimmed(
    checked(checkIssuer, 'is required (the deployment identity issuer URL)'),
  ),
  IDENTITY_DEPLOYMENT_TIER: trimmed(oneOf(IDENTITY_TIERS).default('production')),
  IDENTITY_OIDC_CLIENT_ID: optional(
    z.string().regex(OIDC_CLIENT_ID_PATTERN, { error: 'must match ^[0-9A-Za-z@._~-]{1,128}$' }),
  ),
  IDENTITY_OIDC_CLIENT_SECRET: optionalSecret(z.string()),
  IDENTITY_POST_LOGOUT_REDIRECT_URI: optional(httpUrl()),
  ACCOUNT_CENTER_URL: optional(httpUrl()),
  IDENTITY_ACCESS_TOKEN_AUDIENCE: trimmed(z.string().default('http://localhost:8080')),
  ACCESS_TOKEN_MAX_LIFETIME_SECONDS: trimmed(integer(60, 31_536_000).default(86_400)),
  IDENTITY_ENVIRONMENT_SECRET_KEY: optionalSecret(minLength(32)),
  IDENTITY_SERVICE_URL: optional(httpUrl()),
  IDENTITY_SERVICE_KEY: optionalSecret(minLength(32)),
  PLATFORM_ADMIN_BOOTSTRAP_EMAILS: trimmed(
    checked(checkEmailList, 'must be a comma-separated list of e-mail addresses').default([]),
  ),
  ADMIN_POWER_CONSOLE_ONLY: trimmed(flag().default(false)),
  AUTH_CALLBACK_URL: optional(checked(checkCallbackUrl, 'must be an absolute http(s) URL')),
  AUTH_HANDOFF_TTL_SECONDS: trimmed(integer(30, 300).default(60)),
  CORS_ORIGINS: trimmed(
    checked(checkOriginList, 'must be a comma-separated list of http(s) origins').default([]),
  ),
  DATABASE_URL: optional(
    checked(
      (raw) => checkUrlWithScheme(raw, ['postgres:', 'postgresql:'], POSTGRES_RULE),
      POSTGRES_RULE,
    ),
  ),
  GATEWAY_DATA_DIR: trimmed(z.string().default('.gateway-data')),
  REDIS_URL: optional(
    checked((raw) => checkUrlWithScheme(raw, ['redis:', 'rediss:'], REDIS_RULE), REDIS_RULE),
  ),
  REDIS_SENTINELS: trimmed(hostPortList().default([])),
  REDIS_SENTINEL_MASTER: trimmed(
    z.string().regex(SENTINEL_MASTER_PATTERN, { error: SENTINEL_MASTER_RULE }).default('mymaster'),
  ),
  REDIS_CLUSTER_NODES: trimmed(hostPortList().default([])),
  REDIS_PASSWORD: optionalSecret(z.string()),
  REDIS_TLS: trimmed(flag().default(false)),
  REDIS_REQUIRE_PERSISTENCE: trimmed(flag().default(false)),
  REDIS_KEY_PREFIX: trimmed(
    z
      .string()
      .regex(/^[A-Za-z0-9:_-]{1,64}$/, { error: REDIS_KEY_PREFIX_RULE })
      .default(''),
  ),
  REGISTRY_SERVICE_URL: optional(httpUrl()),
  AUTH_FLOW_SERVICE_URL: optional(httpUrl()),
  ONBOARDING_SERVICE_URL: optional(httpUrl()),
  GATEWAY_ENCRYPTION_KEYS: optionalSecret(
    checked(checkEncryptionKeySpec, 'must be "<id>:<key>[,<id>:<key>...]"'),
  ),
  SERVICE_CALL_TIMEOUT_MS: trimmed(integer(100, 60_000).default(5000)),
  DATABASE_TIMEOUT_MS: trimmed(integer(100, 60_000).default(5000)),
  TRUSTED_PROXIES: trimmed(
    checked(
      checkProxyList,
      'must be a comma-separated list of IP addresses, CIDR blocks or proxy keywords',
    ).default([]),
  ),
  RATE_LIMIT_WINDOW_SECONDS: trimmed(integer(1, 3600).default(60)),
  PLATFORM_AUTH_FAILURE_WINDOW_SECONDS: trimmed(integer(1, 3600).default(60)),
  RATE_LIMIT_BROWSER_PER_IP: trimmed(integer(0, 1_000_000_000).default(300)),
  RATE_LIMIT_EXCHANGE_PER_CLIENT: trimmed(integer(0, 1_000_000_000).default(600)),
  RATE_LIMIT_INTROSPECT_PER_CLIENT: trimmed(integer(0, 1_000_000_000).default(60_000)),
  RATE_LIMIT_SERVER_PER_IP: trimmed(integer(0, 1_000_000_000).default(120_000)),
  OVERLOAD_MAX_IN_FLIGHT: trimmed(integer(0, 1_000_000).default(100)),
  OTEL_EXPORTER_OTLP_ENDPOINT: optional(httpUrl()),
  OTEL_SERVICE_NAME: optional(z.string()),
  METRICS_PORT: optional(integer(1, 65535)),
});

/** The parsed environment, keyed by variable name. */
export type GatewayEnv = z.output<typeof gatewayEnvSchema>;
/** Name of a configuration variable. */
export type GatewayEnvName = keyof typeof gatewayEnvSchema.shape;
