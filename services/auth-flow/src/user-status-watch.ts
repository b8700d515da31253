import { isConnectionFailure, type Database, type DatabaseListener } from '@gateway/db';
import { failDependencySpan, startDependencySpan } from '@gateway/telemetry';
import { USER_STATUS_CHANNEL } from './migrations/0003-notify-user-status.js';

/** `unknown`: the watch is not live; read the user's row instead. */
export type UserStatusAnswer = 'active' | 'inactive' | 'unknown';

/**
 * Which users are not ACTIVE (suspended, soft-deleted, or deleted rows), kept in memory and
 * followed through the notifications of migration 0003, so that an introspection needs no
 * query (issue 8).
 */
export type UserStatusWatch = {
  /**
   * Synchronous. `inactive` for a user who is not ACTIVE or has no row any more, `active`
   * otherwise, while the watch is live; `unknown` while it is not (starting, reconnecting,
   * closed), and on PostgreSQL from a write to authflow.users through this Database until
   * the watch has caught up with it (createUserStatusWatch).
   */
  status(userId: string): UserStatusAnswer;
  readonly live: boolean;
  /** Stops watching and closes the listening connection. Safe to call twice. */
  close(): Promise<void>;
};

export type UserStatusWatchOptions = {
  /** Told why the watch stopped being live or could not start (it retries by itself). */
  onError?: (error: unknown) => void;
  /** First pause before reconnecting (default 200 ms), doubled per failure... */
  retryMinMs?: number;
  /** ...up to this (default 10000 ms). */
  retryMaxMs?: number;
  /** PostgreSQL: how often the listening connection is checked (Database.listen's default). */
  heartbeatMs?: number;
};

const TRIGGERS = ['users_status_inserted', 'users_status_updated', 'users_status_deleted'];

// Without its triggers (a rolled-back migration, `alter table ... disable trigger`) the watch
// would hear nothing and answer from a stale set: it then refuses to go live.
const ARMED_TRIGGERS_SQL = `select count(*)::int as armed from pg_trigger
  where tgrelid = 'authflow.users'::regclass and tgenabled <> 'D'
    and tgname in (${TRIGGERS.map((name) => `'${name}'`).join(', ')})`;

/** A statement knex ran outside a transaction, as its `query-response` event tells it. */
type QueryEvent = { sql?: string; method?: string; __knexTxId?: string };

/**
 * Ends a statement that writes authflow.users but can change no user's status, so that the
 * trigger of migration 0003 notifies nothing for it: the watch sends no fence after it. At
 * the end, so that the statement's first keyword still names its operation in spans. Only
 * for statements whose every write leaves `status` as it was (never in the SET list, no
 * delete) and inserts only ACTIVE rows with a fresh random id. The login's provisioning
 * upsert is one (users.ts); a test holds it to that.
 */
export const STATUS_UNCHANGED = '/* user-status: unchanged */';

const USERS_TABLE = /authflow"?\."?users\b/;
const READ_ONLY = /^\s*select\b/i;

/** True for a committed statement that may have changed a row of authflow.users. */
function wroteUsers(query: QueryEvent): boolean {
  const sql = query.sql;
  if (query.__knexTxId !== undefined || sql === undefined || sql.endsWith(STATUS_UNCHANGED)) {
    return false;
  }
  return USERS_TABLE.test(sql) && !READ_ONLY.test(sql);
}

const NOT_ACTIVE_SQL = `select id::text as id from authflow.users where status <> 'ACTIVE'
  union all select id::text as id from authflow.deleted_users`;

/** What a notification says: the user's id, and whether that user may use sessions now. */
function parseChange(payload: string): { id: string; active: boolean } | undefined {
  try {
    const change = JSON.parse(payload) as { id?: unknown; status?: unknown };
    if (typeof change.id !== 'string') return undefined;
    return { id: change.id, active: change.status === 'ACTIVE' };
  } catch {
    return undefined;
  }
}

/**
 * Starts watching at once and answers `unknown` until live. Each round: LISTEN on a
 * dedicated connection (Database.listen), check the triggers, load the ids of the users not
 * ACTIVE, apply on top what was heard meanwhile (notifications come in commit order, so the
 * last one heard for an id is its newest state), then go live and follow every notification
 * until the connection ends. Then `unknown` again, and a new round after a pause (200 ms,
 * doubling to 10 s while rounds keep failing). Stops for good on close(), or when the
 * database is closed.
 */
export function createUserStatusWatch(
  db: Database,
  options: UserStatusWatchOptions = {},
): UserStatusWatch {
  const retryMinMs = options.retryMinMs ?? 200;
  const retryMaxMs = options.retryMaxMs ?? 10_000;
  /** Defined exactly while live. */
  let notActive: Set<string> | undefined;
  /** While loading: what was heard since LISTEN, by id (true: active). */
  let heard: Map<string, boolean> | undefined;
  /** Writes to authflow.users seen through this Database, and how many a fence has covered. */
  let writes = 0;
  let covered = 0;
  let fencing = false;
  let listener: DatabaseListener | undefined;
  /** The current round: notifications of an earlier round's connection are not applied. */
  let round: object | undefined;
  let closing = false;
  let wake: (() => void) | undefined;

  const report = (error: unknown) => {
    failDependencySpan(
      startDependencySpan('pg.listen', { 'db.system.name': 'postgresql' }),
      error,
      isConnectionFailure(error) ? 'postgres' : undefined,
    );
    options.onError?.(error);
  };

  const onNotification = (from: object, payload: string) => {
    if (from !== round) return;
    const change = parseChange(payload);
    if (change === undefined) {
      // Not ours to guess: start over from a fresh load.
      report(new Error(`Unreadable ${USER_STATUS_CHANNEL} notification`));
      notActive = undefined;
      void listener?.close();
      return;
    }
    if (notActive !== undefined) {
      if (change.active) notActive.delete(change.id);
      else notActive.add(change.id);
    } else {
      heard?.set(change.id, change.active);
    }
  };

  /** One round; resolves when its connection is gone (with why, when known). */
  async function watchOnce(): Promise<{ wentLive: boolean; reason: unknown }> {
    const thisRound = {};
    round = thisRound;
    heard = new Map();
    const current = await db.listen(USER_STATUS_CHANNEL, (p) => onNotification(thisRound, p), {
      ...(options.heartbeatMs === undefined ? {} : { heartbeatMs: options.heartbeatMs }),
    });
    listener = current;
    try {
      if (closing) return { wentLive: false, reason: undefined };
      const [triggers] = await current.query<{ armed: number }>(ARMED_TRIGGERS_SQL);
      if (triggers?.armed !== TRIGGERS.length) {
        throw new Error('The user-status triggers of authflow.users are missing or disabled');
      }
      // The load is itself a fence for the writes that returned before it was sent.
      const coveredByLoad = writes;
      const loaded = new Set(
        (await current.query<{ id: string }>(NOT_ACTIVE_SQL)).map((row) => row.id),
      );
      for (const [id, active] of heard) {
        if (active) loaded.delete(id);
        else loaded.add(id);
      }
      heard = undefined;
      if (closing || !current.listening) return { wentLive: false, reason: undefined };
      notActive = loaded;
      covered = Math.max(covered, coveredByLoad);
      if (covered < writes) fence();
      return { wentLive: true, reason: await current.ended };
    } finally {
      notActive = undefined;
      heard = undefined;
      listener = undefined;
      round = undefined;
      await current.close();
    }
  }

  /**
   * PostgreSQL sends a backend's pending notifications before its ReadyForQuery, and a
   * commit signals the listening backends before the writer hears back. So once a query on
   * the listening connection that was sent after a write returned has answered, that write's
   * notification has been applied. Fences run one at a time, each covering every write seen
   * before it was sent.
   */
  function fence(): void {
    const current = listener;
    if (fencing || current === undefined || notActive === undefined) return;
    fencing = true;
    const covers = writes;
    current.query('select 1').then(
      () => {
        fencing = false;
        if (listener !== current) return;
        covered = Math.max(covered, covers);
        if (covered < writes) fence();
      },
      // The listener has ended itself; the next round's load covers every write.
      () => {
        fencing = false;
      },
    );
  }

  // PGlite applies a notification before the writing query resolves: nothing to catch up.
  const onQueryResponse = (_response: unknown, query: QueryEvent) => {
    if (!wroteUsers(query)) return;
    writes += 1;
    fence();
  };
  if (db.kind === 'postgres') db.knex.on('query-response', onQueryResponse);

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = undefined;
        resolve();
      }, ms);
      timer.unref();
      wake = () => {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      };
    });

  const running = (async () => {
    let delay = retryMinMs;
    while (!closing && !db.closed) {
      try {
        const { wentLive, reason } = await watchOnce();
        if (wentLive) delay = retryMinMs;
        if (reason !== undefined && !closing && !db.closed) report(reason);
      } catch (error) {
        if (!closing && !db.closed) report(error);
      }
      if (closing || db.closed) break;
      // Up to a fifth less, so that many processes that lost the server at once spread out.
      await pause(delay * (0.8 + 0.2 * Math.random()));
      delay = Math.min(delay * 2, retryMaxMs);
    }
  })();

  let closed: Promise<void> | undefined;
  return {
    status(userId) {
      if (notActive === undefined || listener?.listening !== true || covered < writes) {
        return 'unknown';
      }
      return notActive.has(userId) ? 'inactive' : 'active';
    },
    get live() {
      return notActive !== undefined && listener?.listening === true && covered >= writes;
    },
    close: () =>
      (closed ??= (async () => {
        closing = true;
        db.knex.removeListener('query-response', onQueryResponse);
        notActive = undefined;
        wake?.();
        await listener?.close();
        await running;
      })()),
  };
}

/**
 * Whether `userId` may use a session (spec 3.8, 4.5): from the watch while it is live, with
 * no query; otherwise (no watch, or `unknown`) from `readStatus`, the row's status
 * (undefined when there is no row).
 */
export async function isUserActive(
  watch: UserStatusWatch | undefined,
  userId: string,
  readStatus: () => Promise<string | undefined>,
): Promise<boolean> {
  const known = watch?.status(userId) ?? 'unknown';
  if (known !== 'unknown') return known === 'active';
  return (await readStatus()) === 'ACTIVE';
}
