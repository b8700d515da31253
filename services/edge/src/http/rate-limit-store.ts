import type { RedisClient } from '@gateway/db';
import { Cluster } from 'ioredis';

// Counters of the edge's rate limits (docs/decisions.md, "Limits"): fixed windows, one
// counter per key and window. Shared by every edge instance through Redis; a process of its
// own without Redis (the embedded default) keeps them in memory.

export type RateLimitHit = {
  /** Requests counted in the current window, this one included. */
  count: number;
  /** Milliseconds until the window ends. */
  resetMs: number;
};

export type RateLimitStore = {
  /** Counts one request against each key (one round trip for all of them). */
  hit(keys: readonly string[], windowMs: number): Promise<RateLimitHit[]>;
};

/** Counters in this process only: for a single instance. Ended windows are dropped. */
export function createMemoryRateLimitStore(now: () => number = Date.now): RateLimitStore {
  const windows = new Map<string, { count: number; endsAt: number }>();
  let nextSweep = 0;
  return {
    hit(keys, windowMs) {
      const at = now();
      if (at >= nextSweep) {
        for (const [name, window] of windows) if (window.endsAt <= at) windows.delete(name);
        nextSweep = at + windowMs;
      }
      return Promise.resolve(
        keys.map((key) => {
          let window = windows.get(key);
          if (window === undefined || window.endsAt <= at) {
            window = { count: 0, endsAt: at + windowMs };
            windows.set(key, window);
          }
          window.count += 1;
          return { count: window.count, resetMs: window.endsAt - at };
        }),
      );
    },
  };
}

// One round trip for every key of a request, atomic: the first hit of a window sets its
// expiry. Answers count and remaining milliseconds per key, flattened.
const HIT_SCRIPT = `
local out = {}
for i, key in ipairs(KEYS) do
  local count = redis.call('INCR', key)
  if count == 1 then redis.call('PEXPIRE', key, ARGV[1]) end
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then
    redis.call('PEXPIRE', key, ARGV[1])
    ttl = tonumber(ARGV[1])
  end
  out[#out + 1] = count
  out[#out + 1] = ttl
end
return out
`;

type HitCommand = (keyCount: number, ...args: (string | number)[]) => Promise<number[]>;

/**
 * Counters in Redis (under the connection's keyPrefix, then `rl:`), shared by instances. A
 * request's counters go in one script call, except on a Redis Cluster, which runs a script
 * only on keys of one hash slot: there each counter is a call of its own (the calls of one
 * request still leave together, one write per node).
 */
export function createRedisRateLimitStore(redis: RedisClient): RateLimitStore {
  const commands = redis as unknown as Record<string, unknown>;
  if (typeof commands.gatewayRateLimitHit !== 'function') {
    // Key count given per call (the script takes one to several keys).
    redis.defineCommand('gatewayRateLimitHit', { lua: HIT_SCRIPT });
  }
  const command = commands.gatewayRateLimitHit as HitCommand;
  const hitTogether = (keys: readonly string[], windowMs: number) =>
    command.call(redis, keys.length, ...keys.map((key) => `rl:${key}`), windowMs);
  const oneSlotPerCall = redis instanceof Cluster;
  return {
    async hit(keys, windowMs) {
      if (keys.length === 0) return [];
      const reply = oneSlotPerCall
        ? (await Promise.all(keys.map((key) => hitTogether([key], windowMs)))).flat()
        : await hitTogether(keys, windowMs);
      return keys.map((_key, index) => ({
        count: Number(reply[index * 2]),
        resetMs: Number(reply[index * 2 + 1]),
      }));
    },
  };
}
