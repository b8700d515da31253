import type { Redis } from 'ioredis';

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
  hit(key: string, windowMs: number): Promise<RateLimitHit>;
};

/** Counters in this process only: for a single instance. Ended windows are dropped. */
export function createMemoryRateLimitStore(now: () => number = Date.now): RateLimitStore {
  const windows = new Map<string, { count: number; endsAt: number }>();
  let nextSweep = 0;
  return {
    hit(key, windowMs) {
      const at = now();
      if (at >= nextSweep) {
        for (const [name, window] of windows) if (window.endsAt <= at) windows.delete(name);
        nextSweep = at + windowMs;
      }
      let window = windows.get(key);
      if (window === undefined || window.endsAt <= at) {
        window = { count: 0, endsAt: at + windowMs };
        windows.set(key, window);
      }
      window.count += 1;
      return Promise.resolve({ count: window.count, resetMs: window.endsAt - at });
    },
  };
}

// One round trip, atomic: the first hit of a window sets its expiry.
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { count, ttl }
`;

type HitCommand = (key: string, windowMs: number) => Promise<[number, number]>;

/** Counters in Redis (under the connection's keyPrefix, then `rl:`), shared by instances. */
export function createRedisRateLimitStore(redis: Redis): RateLimitStore {
  const commands = redis as unknown as Record<string, unknown>;
  if (typeof commands.gatewayRateLimitHit !== 'function') {
    redis.defineCommand('gatewayRateLimitHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
  }
  const command = commands.gatewayRateLimitHit as HitCommand;
  return {
    async hit(key, windowMs) {
      const [count, resetMs] = await command.call(redis, `rl:${key}`, windowMs);
      return { count: Number(count), resetMs: Number(resetMs) };
    },
  };
}
