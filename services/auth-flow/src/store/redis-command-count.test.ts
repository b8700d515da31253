// What the Redis store sends for an exchange and for a sign-in's callback, command by command,
// as Redis's MONITOR sees it on every master: on one redis-server and on a Cluster of this
// file alone. A script call is one EVAL or EVALSHA (ioredis sends the script's text the first
// time on a connection); the commands a script runs inside (MONITOR's source "lua") are its
// own work, not round trips.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { connectRedis, type RedisClient, type RedisEndpoint } from '@gateway/db';
import { startRedisCluster, startRedisServer, waitFor, type RedisAddress } from '@gateway/testkit';
import { Cluster, Redis } from 'ioredis';
import type { AuthFlowStore } from './auth-flow-store.js';
import { createRedisAuthFlowStore } from './redis-auth-flow-store.js';
import {
  hashIn,
  keyOf,
  newHandoff,
  newHandoffSnapshot,
  newSession,
  newTransaction,
  presenterOf,
  stateOf,
} from './testing/fixtures.js';

type Seen = { command: string; args: string[] };

/** MONITOR on each master: what ran there, from a marker on. */
async function watchMasters(masters: readonly RedisAddress[]) {
  const connections = masters.map(({ host, port }) => new Redis({ host, port }));
  const monitors = await Promise.all(connections.map((connection) => connection.monitor()));
  const seen: Seen[][] = masters.map(() => []);
  monitors.forEach((monitor, index) => {
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source === 'lua') return;
      const [command = '', ...rest] = args;
      seen[index]?.push({ command: command.toLowerCase(), args: rest });
    });
  });
  const markers = masters.map(({ host, port }) => new Redis({ host, port }));
  /** Every command each master ran while `work` ran, the markers and topology reads left out. */
  async function during(work: () => Promise<unknown>): Promise<Seen[]> {
    const before = `before-${randomUUID()}`;
    const after = `after-${randomUUID()}`;
    const sawOnEach = (marker: string) =>
      seen.every((list) => list.some((each) => each.command === 'echo' && each.args[0] === marker));
    await Promise.all(markers.map((marker) => marker.echo(before)));
    await waitFor(async () => sawOnEach(before), {
      timeoutMs: 10_000,
      intervalMs: 10,
      what: before,
    });
    await work();
    await Promise.all(markers.map((marker) => marker.echo(after)));
    await waitFor(async () => sawOnEach(after), { timeoutMs: 10_000, intervalMs: 10, what: after });
    return seen.flatMap((list) => {
      const start = list.findIndex((each) => each.args[0] === before);
      const end = list.findIndex((each) => each.args[0] === after);
      // ioredis reads a Cluster's slots now and then (CLUSTER SLOTS): not the store's work.
      return list.slice(start + 1, end).filter((each) => each.command !== 'cluster');
    });
  }
  return {
    during,
    close() {
      for (const connection of [...monitors, ...connections, ...markers]) connection.disconnect();
    },
  };
}

/** The script a call runs, told by its key count and first key (redis-scripts.ts). */
const SCRIPTS_BY_KEYS: Record<string, string> = {
  '2 txs': 'authflowConsumeTransaction',
  '2 tx': 'authflowCreateTransaction',
  '2 ho': 'authflowRedeemHandoff',
  '1 us': 'authflowIndexSession',
  '4 tx': 'authflowCreateBoundSession',
};

function scriptOf(seen: Seen): string {
  const [, count = '', first = ''] = seen.args;
  const kind = /(?:^|:)(txs|tx|hotx|ho|us|s):/.exec(first)?.[1] ?? '';
  return SCRIPTS_BY_KEYS[`${count} ${kind}`] ?? `${seen.command} ${count} ${kind}`;
}

const SCRIPT_CALL = expect.stringMatching(/^eval(sha)?$/);

const setups: Array<{
  name: string;
  start: () => Promise<{
    connection: RedisEndpoint;
    masters: () => Promise<RedisAddress[]>;
    stop: () => Promise<void>;
  }>;
}> = [
  {
    name: 'one redis-server',
    start: async () => {
      const server = await startRedisServer();
      return {
        connection: server.connection,
        masters: async () => [server.address],
        stop: () => server.stop(),
      };
    },
  },
  {
    name: 'a Redis Cluster',
    start: async () => {
      const cluster = await startRedisCluster();
      return {
        connection: cluster.connection,
        masters: async () => {
          const probe = new Redis(cluster.nodes[0] as RedisAddress);
          try {
            const nodes = String(await probe.call('CLUSTER', 'NODES'));
            return nodes
              .split('\n')
              .filter((line) => /\bmaster\b/.test(line) && !/\bfail\b/.test(line))
              .map((line) => {
                const [host = '', port = ''] =
                  (line.split(' ')[1] ?? '').split('@')[0]?.split(':') ?? [];
                return { host, port: Number(port) };
              });
          } finally {
            probe.disconnect();
          }
        },
        stop: () => cluster.stop(),
      };
    },
  },
];

describe.each(setups)('Redis commands on $name', ({ start }) => {
  let stop: () => Promise<void> = async () => undefined;
  let redis: RedisClient;
  let store: AuthFlowStore;
  let watch: Awaited<ReturnType<typeof watchMasters>>;

  beforeAll(async () => {
    const setup = await start();
    stop = setup.stop;
    const masters = await setup.masters();
    redis = await connectRedis({
      ...setup.connection,
      keyPrefix: `count:${randomUUID()}:`,
      timeoutMs: 5_000,
    });
    store = createRedisAuthFlowStore(redis);
    // Every connection to a master open, as in a running gateway.
    if (redis instanceof Cluster)
      await Promise.all(redis.nodes('master').map((node) => node.ping()));
    watch = await watchMasters(masters);
  });
  afterAll(async () => {
    watch?.close();
    redis?.disconnect();
    await stop();
  });

  /** A callback's store work: consume the state, then bind with the session and handoff. */
  async function callback(now: number, identitySessionId: string | null = null) {
    const transaction = newTransaction(now);
    await store.createTransaction(transaction);
    const session = newSession(now, { tokenHash: hashIn(transaction), identitySessionId });
    const handoff = newHandoff(transaction, now, {
      userId: session.userId,
      sessionId: session.id,
      sessionTokenHash: session.tokenHash,
      snapshot: newHandoffSnapshot(),
    });
    const consumed = await store.consumeTransaction(stateOf(transaction), now);
    const bound = await store.createBoundSession({
      transactionId: transaction.id,
      keepUntil: now + 60_000,
      session,
      handoff,
    });
    return { consumed, bound, handoff, session };
  }

  it("sends one script call for an exchange and nothing else, the code's and its session's keys declared", async () => {
    const now = Date.now();
    const { bound, handoff, session } = await callback(now);
    expect(bound).toBe('bound');

    let answer: unknown;
    const seen = await watch.during(async () => {
      answer = await store.redeemHandoff(keyOf(handoff), now, presenterOf(handoff));
    });
    expect(answer).toMatchObject({
      codeHash: handoff.codeHash,
      session: { expiresAt: session.expiresAt },
    });
    expect(seen.map((each) => each.command)).toEqual([SCRIPT_CALL]);
    expect(seen.map(scriptOf)).toEqual(['authflowRedeemHandoff']);
    // Two keys: the code's and its session's.
    expect(seen[0]?.args.slice(1, 4)).toEqual([
      '2',
      expect.stringContaining(`ho:{${handoff.codeHash.slice(0, 8)}}`),
      expect.stringContaining(`s:{${session.tokenHash.slice(0, 8)}}`),
    ]);
  });

  it("sends three script calls for a callback's consume, session and handoff, the user's index before the session", async () => {
    let result: Awaited<ReturnType<typeof callback>> | undefined;
    const now = Date.now();
    const seen = await watch.during(async () => {
      result = await callback(now);
    });
    expect(result?.consumed).toBeDefined();
    expect(result?.bound).toBe('bound');
    // The transaction's creation belongs to the start, not the callback.
    const callbackWork = seen.filter((each) => scriptOf(each) !== 'authflowCreateTransaction');
    expect(callbackWork.map((each) => each.command)).toEqual([
      SCRIPT_CALL,
      SCRIPT_CALL,
      SCRIPT_CALL,
    ]);
    expect(callbackWork.map(scriptOf).sort()).toEqual(
      ['authflowConsumeTransaction', 'authflowCreateBoundSession', 'authflowIndexSession'].sort(),
    );
    // In the order sent where one server runs them all.
    if (!redis.isCluster) {
      expect(callbackWork.map(scriptOf)).toEqual([
        'authflowConsumeTransaction',
        'authflowIndexSession',
        'authflowCreateBoundSession',
      ]);
    }
  });

  it("indexes a sign-in with a sid in the same index call on one server, and beside the user's index on a Cluster", async () => {
    let result: Awaited<ReturnType<typeof callback>> | undefined;
    const now = Date.now();
    const seen = await watch.during(async () => {
      result = await callback(now, `sid-${randomUUID()}`);
    });
    expect(result?.bound).toBe('bound');
    const callbackWork = seen.filter((each) => scriptOf(each) !== 'authflowCreateTransaction');
    expect(callbackWork.every((each) => /^eval(sha)?$/.test(each.command))).toBe(true);
    /** The key kinds of an index call (us, ids), or undefined for another script. */
    const indexKeys = (each: Seen) => {
      const [, count = '0', ...rest] = each.args;
      const keys = rest.slice(0, Number(count)).map((key) => /:(us|ids):/.exec(key)?.[1]);
      return keys.every((kind) => kind !== undefined) ? keys : undefined;
    };
    const indexCalls = callbackWork.map(indexKeys).filter((keys) => keys !== undefined);
    if (redis.isCluster) {
      // Another slot: its own call, sent with the user's index, before the session.
      expect(callbackWork).toHaveLength(4);
      expect(indexCalls.sort()).toEqual([['ids'], ['us']]);
    } else {
      expect(callbackWork).toHaveLength(3);
      expect(indexCalls).toEqual([['us', 'ids']]);
      expect(callbackWork.map(indexKeys)[1]).toEqual(['us', 'ids']);
    }
  });
});
