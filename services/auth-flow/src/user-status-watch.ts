import { isConnectionFailure, type Database, type DatabaseListener } from '@gateway/db';
import { failDependencySpan, startDependencySpan } from '@gateway/telemetry';
import { USER_STATUS_CHANNEL } from './migrations/0003-notify-user-status.js';

/** `unknown`: the watch is not live; read the user's row instead. */
export type UserStatusAnswer = 'active' | 'inactive' | 'unknown';

/**
 * Which users are not ACTIVE (suspended, soft-deleted, or deleted rows), kept in memory and
 * followed through the notifications of migration 0003, so that an introspection needs no
 * query.
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

/** The watch's mutable state, shared by the steps below. */
type WatchState = {
  db: Database;
  options: UserStatusWatchOptions;
  /** Defined exactly while live. */
  notActive: Set<string> | undefined;
  /** While loading: what was heard since LISTEN, by id (true: active). */
  heard: Map<string, boolean> | undefined;
  /** Writes to authflow.users seen through this Database, and how many a fence has covered. */
  writes: number;
  covered: number;
  fencing: boolean;
  listener: DatabaseListener | undefined;
  /** The current round: notifications of an earlier round's connection are not applied. */
  round: object | undefined;
  closing: boolean;
  wake: (() => void) | undefined;
};

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
  const state: WatchState = {
    db,
    options,
    notActive: undefined,
    heard: undefined,
    writes: 0,
    covered: 0,
    fencing: false,
    listener: undefined,
    round: undefined,
    closing: false,
    wake: undefined,
  };
  // PGlite applies a notification before the writing query resolves: nothing to catch up.
  const onQueryResponse = (_response: unknown, query: QueryEvent) => {
    if (!wroteUsers(query)) return;
    state.writes += 1;
    fence(state);
  };
  if (db.kind === 'postgres') db.knex.on('query-response', onQueryResponse);
  const running = runRounds(state);
  let closed: Promise<void> | undefined;
  return {
    status: (userId) => statusOf(state, userId),
    get live() {
      return isLive(state);
    },
    close: () =>
      (closed ??= (async () => {
        state.closing = true;
        db.knex.removeListener('query-response', onQueryResponse);
        state.notActive = undefined;
        state.wake?.();
        await state.listener?.close();
        await running;
      })()),
  };
}

function isLive(state: WatchState): boolean {
  return (
    state.notActive !== undefined &&
    state.listener?.listening === true &&
    state.covered >= state.writes
  );
}

function statusOf(state: WatchState, userId: string): UserStatusAnswer {
  if (!isLive(state) || state.notActive === undefined) return 'unknown';
  return state.notActive.has(userId) ? 'inactive' : 'active';
}

function report(state: WatchState, error: unknown): void {
  failDependencySpan(
    startDependencySpan('pg.listen', { 'db.system.name': 'postgresql' }),
    error,
    isConnectionFailure(error) ? 'postgres' : undefined,
  );
  state.options.onError?.(error);
}

/** Rounds until close() or the database closes, pausing longer while they keep failing. */
async function runRounds(state: WatchState): Promise<void> {
  const { db, options } = state;
  const retryMinMs = options.retryMinMs ?? 200;
  const retryMaxMs = options.retryMaxMs ?? 10_000;
  const stopped = () => state.closing || db.closed;
  let delay = retryMinMs;
  while (!stopped()) {
    try {
      const { wentLive, reason } = await watchOnce(state);
      if (wentLive) delay = retryMinMs;
      if (reason !== undefined && !stopped()) report(state, reason);
    } catch (error) {
      if (!stopped()) report(state, error);
    }
    if (stopped()) break;
    // Up to a fifth less, so that many processes that lost the server at once spread out.
    await pause(state, delay * (0.8 + 0.2 * Math.random()));
    delay = Math.min(delay * 2, retryMaxMs);
  }
}

/** Resolves after `ms`, or at once when close() wakes it. */
function pause(state: WatchState, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      state.wake = undefined;
      resolve();
    }, ms);
    timer.unref();
    state.wake = () => {
      clearTimeout(timer);
      state.wake = undefined;
      resolve();
    };
  });
}

function onNotification(state: WatchState, from: object, payload: string): void {
  if (from !== state.round) return;
  const change = parseChange(payload);
  if (change === undefined) {
    // Not ours to guess: start over from a fresh load.
    report(state, new Error(`Unreadable ${USER_STATUS_CHANNEL} notification`));
    state.notActive = undefined;
    void state.listener?.close();
    return;
  }
  if (state.notActive !== undefined) {
    if (change.active) state.notActive.delete(change.id);
    else state.notActive.add(change.id);
  } else {
    state.heard?.set(change.id, change.active);
  }
}

/** One round; resolves when its connection is gone (with why, when known). */
async function watchOnce(state: WatchState): Promise<{ wentLive: boolean; reason: unknown }> {
  const thisRound = {};
  state.round = thisRound;
  const heard = new Map<string, boolean>();
  state.heard = heard;
  const { heartbeatMs } = state.options;
  const current = await state.db.listen(
    USER_STATUS_CHANNEL,
    (payload) => onNotification(state, thisRound, payload),
    heartbeatMs === undefined ? {} : { heartbeatMs },
  );
  state.listener = current;
  try {
    if (state.closing) return { wentLive: false, reason: undefined };
    await checkTriggers(current);
    // The load is itself a fence for the writes that returned before it was sent.
    const coveredByLoad = state.writes;
    const loaded = await loadNotActive(current, heard);
    state.heard = undefined;
    if (state.closing || !current.listening) return { wentLive: false, reason: undefined };
    state.notActive = loaded;
    state.covered = Math.max(state.covered, coveredByLoad);
    if (state.covered < state.writes) fence(state);
    return { wentLive: true, reason: await current.ended };
  } finally {
    state.notActive = undefined;
    state.heard = undefined;
    state.listener = undefined;
    state.round = undefined;
    await current.close();
  }
}

async function checkTriggers(listener: DatabaseListener): Promise<void> {
  const [triggers] = await listener.query<{ armed: number }>(ARMED_TRIGGERS_SQL);
  if (triggers?.armed !== TRIGGERS.length) {
    throw new Error('The user-status triggers of authflow.users are missing or disabled');
  }
}

/** The users not ACTIVE, with what was heard since LISTEN applied on top. */
async function loadNotActive(
  listener: DatabaseListener,
  heard: Map<string, boolean>,
): Promise<Set<string>> {
  const loaded = new Set(
    (await listener.query<{ id: string }>(NOT_ACTIVE_SQL)).map((row) => row.id),
  );
  for (const [id, active] of heard) {
    if (active) loaded.delete(id);
    else loaded.add(id);
  }
  return loaded;
}

/**
 * PostgreSQL sends a backend's pending notifications before its ReadyForQuery, and a commit
 * signals the listening backends before the writer hears back. So once a query on the
 * listening connection that was sent after a write returned has answered, that write's
 * notification has been applied. Fences run one at a time, each covering every write seen
 * before it was sent.
 */
function fence(state: WatchState): void {
  const current = state.listener;
  if (state.fencing || current === undefined || state.notActive === undefined) return;
  state.fencing = true;
  const covers = state.writes;
  current.query('select 1').then(
    () => {
      state.fencing = false;
      if (state.listener !== current) return;
      state.covered = Math.max(state.covered, covers);
      if (state.covered < state.writes) fence(state);
    },
    // The listener has ended itself; the next round's load covers every write.
    () => {
      state.fencing = false;
    },
  );
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
