import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { startTcpProxy, waitFor } from '@gateway/testkit';
import type { Database } from './database.js';
import { createDriverHarness } from './testing/database-drivers.js';

const harness = createDriverHarness();
afterAll(() => harness.cleanup());

const CHANNEL = 'test_listener_channel';

function collector() {
  const payloads: string[] = [];
  return { payloads, push: (payload: string) => payloads.push(payload) };
}

const until = (what: string, check: () => boolean) =>
  waitFor(() => Promise.resolve(check()), { timeoutMs: 5_000, intervalMs: 10, what });

describe.each(harness.drivers)('Database.listen on $kind', (driver) => {
  let db: Database;
  beforeAll(async () => {
    db = await driver.open();
  });

  it('hears committed notifications in commit order, none of a rolled-back transaction', async () => {
    const heard = collector();
    const listener = await db.listen(CHANNEL, heard.push);
    await db.knex.raw(`select pg_notify('${CHANNEL}', 'one')`);
    await db.knex
      .transaction(async (trx) => {
        await trx.raw(`select pg_notify('${CHANNEL}', 'discarded')`);
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await db.knex.transaction(async (trx) => {
      await trx.raw(`select pg_notify('${CHANNEL}', 'two')`);
      await trx.raw(`select pg_notify('other_channel', 'elsewhere')`);
    });
    await until('two notifications', () => heard.payloads.length >= 2);
    expect(heard.payloads).toEqual(['one', 'two']);
    expect(listener.listening).toBe(true);
    expect(await listener.query<{ answer: number }>('select 42 as answer')).toEqual([
      { answer: 42 },
    ]);
    await listener.close();
    expect(listener.listening).toBe(false);
    await expect(listener.ended).resolves.toBeUndefined();
    await db.knex.raw(`select pg_notify('${CHANNEL}', 'after close')`);
    expect(heard.payloads).toEqual(['one', 'two']);
  });

  it('refuses channel names that are not plain identifiers', async () => {
    await expect(db.listen('bad"; drop table x; --', () => undefined)).rejects.toThrow(
      'Not a plain channel name',
    );
  });

  it('keeps listening for the others when one of two listeners on a channel closes', async () => {
    const first = collector();
    const second = collector();
    const one = await db.listen(CHANNEL, first.push);
    const two = await db.listen(CHANNEL, second.push);
    await one.close();
    await db.knex.raw(`select pg_notify('${CHANNEL}', 'for two')`);
    await until('the second listener', () => second.payloads.length === 1);
    expect(first.payloads).toEqual([]);
    await two.close();
  });

  it('closes its listeners with the database and refuses new ones after', async () => {
    const own = await driver.open();
    const listener = await own.listen(CHANNEL, () => undefined);
    expect(own.closed).toBe(false);
    await own.close();
    expect(own.closed).toBe(true);
    await expect(listener.ended).resolves.toBeUndefined();
    expect(listener.listening).toBe(false);
    await expect(own.listen(CHANNEL, () => undefined)).rejects.toThrow('closed');
  });
});

describe('Database.listen on PostgreSQL when the connection goes', () => {
  it('ends when its backend is terminated', async () => {
    const { url } = await harness.newPostgresDatabase();
    const db = await harness.connect({ url });
    const listener = await db.listen(CHANNEL, () => undefined);
    const { rows } = (await db.knex.raw(
      "select pg_terminate_backend(pid) as done from pg_stat_activity where application_name = 'gateway listen test_listener_channel' and datname = current_database()",
    )) as { rows: { done: boolean }[] };
    expect(rows).toEqual([{ done: true }]);
    await expect(listener.ended).resolves.toBeInstanceOf(Error);
    expect(listener.listening).toBe(false);
  });

  it('ends within about two heartbeats when the link stalls without a word', async () => {
    const { url } = await harness.newPostgresDatabase();
    const target = new URL(url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    try {
      target.port = String(proxy.port);
      const db = await harness.connect({ url: target.href });
      const listener = await db.listen(CHANNEL, () => undefined, { heartbeatMs: 200 });
      await proxy.stall();
      const stalledAt = Date.now();
      await expect(listener.ended).resolves.toBeInstanceOf(Error);
      // The heartbeat ends it, long before a TCP keep-alive would notice the stall.
      expect(Date.now() - stalledAt).toBeLessThan(10_000);
    } finally {
      await proxy.close();
    }
  });
});
