import { Redis } from 'ioredis';
import { testRedisUrl } from './redis-server.js';
import { randomHex } from './random-name.js';

export type TestRedis = {
  url: string;
  /** `t:<random hex>:` — every key a test file writes must start with it. */
  keyPrefix: string;
  /** Deletes every key starting with keyPrefix (SCAN + UNLINK) and closes the connection. */
  cleanup(): Promise<void>;
};

/** A Redis URL plus a key prefix of its own, for one test file. */
export async function createTestRedis(): Promise<TestRedis> {
  const url = await testRedisUrl();
  const keyPrefix = `t:${randomHex()}:`;
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3 });
  await client.connect();
  let closed = false;
  return {
    url,
    keyPrefix,
    cleanup: async () => {
      if (closed) return;
      closed = true;
      try {
        await deleteKeysWithPrefix(client, keyPrefix);
      } finally {
        await client.quit().catch(() => client.disconnect());
      }
    },
  };
}

async function deleteKeysWithPrefix(client: Redis, prefix: string): Promise<void> {
  const pattern = `${escapeGlob(prefix)}*`;
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    if (keys.length > 0) await client.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (character) => `\\${character}`);
}
