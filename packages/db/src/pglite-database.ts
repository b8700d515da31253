import { existsSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import knexModule from 'knex';
import type { Knex } from 'knex';
import type { Database } from './database.js';
import { DEFAULT_PING_TIMEOUT_MS, once } from './database.js';
import { quietKnexLog } from './knex-log.js';
import { createListenerSet, pgliteListeners } from './listener.js';
import { PGliteKnexClient } from './pglite-client.js';
import { pingDatabase } from './ping.js';
import { pristineCluster } from './pristine-cluster.js';
import { restrictToOwner } from './restrict-to-owner.js';
import { pgliteParsers } from './type-parsers.js';

const DEFAULT_WAIT_FOR_CONNECTION_MS = 30_000;

export type PGliteOptions = {
  /** Folder for the database files; omitted means in memory. */
  dataDir?: string;
  connectTimeoutMs?: number;
};

/**
 * A Database on embedded PostgreSQL (PGlite). PGlite has exactly one connection: knex's pool
 * holds it, a transaction keeps it until commit/rollback, and every other query waits.
 */
export async function createPGliteDatabase(options: PGliteOptions): Promise<Database> {
  const pglite = await openPGlite(options.dataDir);
  const knex = knexModule.knex({
    client: PGliteKnexClient,
    dialect: 'postgres',
    // knex-pglite accepts a ready PGlite instance through a connection function; knex's types
    // do not know that shape.
    connection: (() => ({ pglite })) as unknown as Knex.ConnectionConfigProvider,
    acquireConnectionTimeout: options.connectTimeoutMs ?? DEFAULT_WAIT_FOR_CONNECTION_MS,
    log: quietKnexLog,
  });
  const openListener = pgliteListeners(knex, (callback) => pglite.onNotification(callback));
  const listeners = createListenerSet();
  return {
    knex,
    kind: 'pglite',
    ping: (timeoutMs = DEFAULT_PING_TIMEOUT_MS) => pingDatabase(knex, timeoutMs),
    listen: (channel, onNotification) =>
      listeners.add(() => openListener(channel, onNotification, () => !listeners.closed)),
    get closed() {
      return listeners.closed;
    },
    close: once(async () => {
      await listeners.closeAll();
      await knex.destroy(); // closes PGlite if the pool ever opened it
      if (!pglite.closed) await pglite.close();
    }),
  };
}

async function openPGlite(dataDir: string | undefined): Promise<PGlite> {
  if (dataDir === undefined) {
    return PGlite.create({ parsers: pgliteParsers, loadDataDir: await pristineCluster() });
  }
  // Owner-only: the cluster holds every account and platform of the gateway.
  const folder = resolve(dataDir);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  await chmod(folder, 0o700);
  // A new folder starts from the pristine cluster's snapshot, not from initdb.
  const loadDataDir = existsSync(join(folder, 'PG_VERSION')) ? undefined : await pristineCluster();
  const pglite = await PGlite.create({
    dataDir: folder,
    parsers: pgliteParsers,
    ...(loadDataDir === undefined ? {} : { loadDataDir }),
  });
  await restrictToOwner(folder);
  return pglite;
}
