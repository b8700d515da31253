// LISTEN on PostgreSQL and on PGlite behind one shape (Database.listen).
import type { Knex } from 'knex';
import pg from 'pg';
import type { DatabaseListener } from './database.js';
import { DatabaseUnavailableError, errorMessage } from './errors.js';

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;
export const DEFAULT_HEARTBEAT_MS = 1_000;

/** The channel as a quoted identifier; only plain lower-case names are accepted. */
function quotedChannel(channel: string): string {
  if (!CHANNEL.test(channel)) throw new Error(`Not a plain channel name: "${channel}"`);
  return `"${channel}"`;
}

/** Settles once with the first value given; later calls do nothing. */
function settleOnce<T>(): {
  promise: Promise<T>;
  settle(value: T): void;
  readonly settled: boolean;
} {
  let resolve!: (value: T) => void;
  let settled = false;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return {
    promise,
    settle(value) {
      settled = true;
      resolve(value);
    },
    get settled() {
      return settled;
    },
  };
}

/**
 * PostgreSQL: a connection of its own (outside the knex pool, which would hand it to other
 * queries and close it when idle) that LISTENs on `channel`. While no other query runs on it,
 * it is checked every `heartbeatMs` with `select 1`, and a check not answered within
 * `heartbeatMs` counts as a lost connection: a link that died without a word (no FIN, no
 * RST) is noticed within about twice `heartbeatMs`. A `query` not answered within
 * `queryTimeoutMs` ends the listener the same way. `ended` settles when the connection fails
 * or is closed.
 */
export async function openPostgresListener(
  config: pg.ClientConfig,
  channel: string,
  onNotification: (payload: string) => void,
  timing: { heartbeatMs: number; queryTimeoutMs: number },
): Promise<DatabaseListener> {
  const connection = listeningConnection(
    new pg.Client({ ...config, keepAlive: true, application_name: `gateway listen ${channel}` }),
  );
  connection.client.on('notification', (message) => {
    if (message.channel === channel) onNotification(message.payload ?? '');
  });
  try {
    await connection.client.connect();
    await timedQuery(connection, `listen ${quotedChannel(channel)}`, timing.queryTimeoutMs);
  } catch (error) {
    await connection.stop(error);
    throw new DatabaseUnavailableError(`Could not listen on ${channel}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  startHeartbeat(connection, timing.heartbeatMs);
  return {
    query: <Row>(sql: string) => timedQuery<Row>(connection, sql, timing.queryTimeoutMs),
    ended: connection.ended.promise,
    get listening() {
      return !connection.ended.settled;
    },
    close: () => connection.stop(undefined),
  };
}

type ListeningConnection = {
  client: pg.Client;
  /** Settles with the reason the connection stopped (undefined when closed). */
  ended: ReturnType<typeof settleOnce<unknown>>;
  heartbeat: NodeJS.Timeout | undefined;
  /** Queries under way. */
  running: number;
  readonly closing: boolean;
  /** Ends the connection once; an error or end event of the client stops it too. */
  stop(reason: unknown): Promise<void>;
};

function listeningConnection(client: pg.Client): ListeningConnection {
  let closing: Promise<void> | undefined;
  const connection: ListeningConnection = {
    client,
    ended: settleOnce<unknown>(),
    heartbeat: undefined,
    running: 0,
    get closing() {
      return closing !== undefined;
    },
    stop(reason) {
      closing ??= (async () => {
        clearTimeout(connection.heartbeat);
        connection.ended.settle(reason);
        // A hung query makes pg destroy the socket; a quiet dead socket may never answer the
        // goodbye, so end() is not waited for beyond a short while.
        await Promise.race([
          client.end().catch(() => undefined),
          new Promise((resolve) => setTimeout(resolve, 1_000).unref()),
        ]);
      })();
      return closing;
    },
  };
  client.on('error', (error) => void connection.stop(error));
  client.on('end', () => {
    void connection.stop(new DatabaseUnavailableError('The listening connection ended'));
  });
  return connection;
}

/** Runs `sql`; failing or taking longer than `timeoutMs` ends the listener. */
async function timedQuery<Row>(
  connection: ListeningConnection,
  sql: string,
  timeoutMs: number,
): Promise<Row[]> {
  let answered = false;
  connection.running += 1;
  const timer = setTimeout(() => {
    // After a long pause of the event loop the timer runs before the socket reads of the
    // same turn: look again after them.
    setImmediate(() => {
      if (!answered) {
        void connection.stop(new DatabaseUnavailableError(`No answer within ${timeoutMs} ms`));
      }
    });
  }, timeoutMs).unref();
  try {
    return (await connection.client.query(sql)).rows as Row[];
  } catch (error) {
    void connection.stop(error);
    throw error;
  } finally {
    answered = true;
    connection.running -= 1;
    clearTimeout(timer);
  }
}

/** Checks the idle connection every `heartbeatMs` with `select 1`, bounded by `heartbeatMs`. */
function startHeartbeat(connection: ListeningConnection, heartbeatMs: number): void {
  const beat = () => {
    if (connection.closing) return;
    const next = () => {
      if (!connection.closing) connection.heartbeat = setTimeout(beat, heartbeatMs).unref();
    };
    // A query under way proves nothing yet and bounds itself.
    if (connection.running > 0) next();
    else timedQuery(connection, 'select 1', heartbeatMs).then(next, () => undefined);
  };
  connection.heartbeat = setTimeout(beat, heartbeatMs).unref();
}

/**
 * PGlite: its one connection LISTENs (through knex, so never inside another caller's open
 * transaction) and PGlite hands every notification to its listeners before the committing
 * query's promise resolves. Nothing can drop, so `ended` settles only on close.
 */
export function pgliteListeners(
  knex: Knex,
  onNotification: (callback: (channel: string, payload: string) => void) => () => void,
) {
  const perChannel = new Map<string, number>();
  return async (
    channel: string,
    deliver: (payload: string) => void,
    databaseOpen: () => boolean,
  ): Promise<DatabaseListener> => {
    const listen = `listen ${quotedChannel(channel)}`;
    const stopDelivery = onNotification((to, payload) => {
      if (to === channel) deliver(payload);
    });
    try {
      await knex.raw(listen);
    } catch (error) {
      stopDelivery();
      throw error;
    }
    perChannel.set(channel, (perChannel.get(channel) ?? 0) + 1);
    const ended = settleOnce<unknown>();
    let closing: Promise<void> | undefined;
    return {
      query: async <Row>(sql: string) => ((await knex.raw(sql)) as { rows: Row[] }).rows,
      ended: ended.promise,
      get listening() {
        return !ended.settled;
      },
      close: () =>
        (closing ??= (async () => {
          stopDelivery();
          const left = (perChannel.get(channel) ?? 1) - 1;
          perChannel.set(channel, left);
          if (left === 0 && databaseOpen()) {
            await knex.raw(`unlisten ${quotedChannel(channel)}`).catch(() => undefined);
          }
          ended.settle(undefined);
        })()),
    };
  };
}

/**
 * The listeners a Database has open and whether it is closed, as both implementations keep
 * them: no listener opens on a closed Database (one that opened while it closed is closed
 * again), and closing closes them all.
 */
export function createListenerSet() {
  const listeners = new Set<DatabaseListener>();
  let closed = false;
  const refuse = () => new DatabaseUnavailableError('The database is closed');
  return {
    get closed() {
      return closed;
    },
    async add(open: () => Promise<DatabaseListener>): Promise<DatabaseListener> {
      if (closed) throw refuse();
      const listener = await open();
      if (closed) {
        await listener.close();
        throw refuse();
      }
      listeners.add(listener);
      void listener.ended.then(() => listeners.delete(listener));
      return listener;
    },
    async closeAll(): Promise<void> {
      closed = true;
      await Promise.all([...listeners].map((listener) => listener.close()));
    },
  };
}
