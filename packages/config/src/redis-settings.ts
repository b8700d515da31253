import { isIP } from 'node:net';
import type { ConfigIssue } from './config-error.js';
import type { Checked } from './value-rules.js';
import { splitList } from './value-rules.js';

// The Redis of a deployment, named one of three ways: one server (REDIS_URL), a master found
// through Redis Sentinel (REDIS_SENTINELS, REDIS_SENTINEL_MASTER) or a Redis Cluster
// (REDIS_CLUSTER_NODES). The password (REDIS_PASSWORD or the URL's) and TLS (REDIS_TLS or
// `rediss://`) apply to every mode. Every rule of these variables is in this file.

/** One `host:port` of REDIS_SENTINELS or REDIS_CLUSTER_NODES. */
export type RedisAddress = { readonly host: string; readonly port: number };

type RedisCredentials = {
  /** REDIS_PASSWORD; in single mode a password written in the URL is used instead. */
  readonly password: string | undefined;
  /** REDIS_TLS, or a `rediss://` URL. */
  readonly tls: boolean;
};

/** How the gateway reaches its Redis; undefined in GatewayConfig when none is configured. */
export type RedisSettings =
  | (RedisCredentials & { readonly mode: 'single'; readonly url: string })
  | (RedisCredentials & {
      readonly mode: 'sentinel';
      readonly sentinels: readonly RedisAddress[];
      readonly masterName: string;
    })
  | (RedisCredentials & { readonly mode: 'cluster'; readonly nodes: readonly RedisAddress[] });

/** The three ways to name the Redis, in the order the configuration table lists them. */
export const REDIS_ENDPOINT_VARIABLES = [
  'REDIS_URL',
  'REDIS_SENTINELS',
  'REDIS_CLUSTER_NODES',
] as const;

export const HOST_PORT_LIST_RULE =
  'must be a comma-separated list of host:port (a host name, an IPv4 address or an IPv6 ' +
  'address in brackets, and a port from 1 to 65535)';
export const SENTINEL_MASTER_RULE = 'must be 1 to 64 letters, digits, `.`, `_` or `-`';
export const SENTINEL_MASTER_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

const HOST_NAME_PATTERN =
  /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** `host:port`, `1.2.3.4:port` or `[::1]:port` as an address, or undefined. */
export function parseRedisAddress(item: string): RedisAddress | undefined {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(item);
  if (match === null) return undefined;
  const port = Number(match[3]);
  if (port < 1 || port > 65535) return undefined;
  const [, ipv6, name = ''] = match;
  if (ipv6 !== undefined) return isIP(ipv6) === 6 ? { host: ipv6, port } : undefined;
  return isIP(name) === 4 || HOST_NAME_PATTERN.test(name) ? { host: name, port } : undefined;
}

/** REDIS_SENTINELS, REDIS_CLUSTER_NODES: comma-separated `host:port`, kept as written, no duplicates. */
export function checkHostPortList(raw: string): Checked<string[]> {
  const items = splitList(raw);
  if (items.length === 0) return { ok: false, rule: `${HOST_PORT_LIST_RULE} (no entries given)` };
  for (const [index, item] of items.entries()) {
    if (parseRedisAddress(item) === undefined) {
      return { ok: false, rule: `${HOST_PORT_LIST_RULE} (entry ${index + 1} is not one)` };
    }
  }
  return { ok: true, value: [...new Set(items)] };
}

const isSet = (value: string | undefined): value is string =>
  value !== undefined && value.trim() !== '';

function urlHasPassword(raw: string): boolean {
  try {
    return new URL(raw.trim()).password !== '';
  } catch {
    return false;
  }
}

/**
 * Rules across the Redis variables, checked on the raw environment so they are reported
 * together with every other bad variable: one Redis, named one way; one password.
 */
export function redisSettingsIssues(env: NodeJS.ProcessEnv): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const named = REDIS_ENDPOINT_VARIABLES.filter((name) => isSet(env[name]));
  if (named.length > 1) {
    issues.push({
      variable: named.join(', '),
      rule:
        `${named.length === 2 ? 'are both' : 'are all'} set: set only one of REDIS_URL, ` +
        'REDIS_SENTINELS and REDIS_CLUSTER_NODES (each names the whole Redis)',
    });
  }
  if (isSet(env.REDIS_PASSWORD) && isSet(env.REDIS_URL) && urlHasPassword(env.REDIS_URL)) {
    issues.push({
      variable: 'REDIS_PASSWORD',
      rule: 'must not be set when REDIS_URL holds a password (give the password once)',
    });
  }
  return issues;
}

/** The parsed Redis variables (see env-schema.ts). */
export type RedisVariables = {
  REDIS_URL?: string | undefined;
  REDIS_SENTINELS: string[];
  REDIS_SENTINEL_MASTER: string;
  REDIS_CLUSTER_NODES: string[];
  REDIS_PASSWORD?: string | undefined;
  REDIS_TLS: boolean;
};

const toAddresses = (items: readonly string[]): readonly RedisAddress[] =>
  Object.freeze(
    items.flatMap((item) => {
      const address = parseRedisAddress(item);
      return address === undefined ? [] : [Object.freeze(address)];
    }),
  );

/** The Redis the variables name, or undefined when none is configured. */
export function toRedisSettings(env: RedisVariables): RedisSettings | undefined {
  const credentials = { password: env.REDIS_PASSWORD, tls: env.REDIS_TLS };
  if (env.REDIS_URL !== undefined) {
    const tls = credentials.tls || new URL(env.REDIS_URL).protocol === 'rediss:';
    return Object.freeze({ mode: 'single', url: env.REDIS_URL, ...credentials, tls });
  }
  if (env.REDIS_SENTINELS.length > 0) {
    return Object.freeze({
      mode: 'sentinel',
      sentinels: toAddresses(env.REDIS_SENTINELS),
      masterName: env.REDIS_SENTINEL_MASTER,
      ...credentials,
    });
  }
  if (env.REDIS_CLUSTER_NODES.length > 0) {
    return Object.freeze({
      mode: 'cluster',
      nodes: toAddresses(env.REDIS_CLUSTER_NODES),
      ...credentials,
    });
  }
  return undefined;
}
