import type { Database } from '@gateway/db';
import { isUniqueViolation, toCount } from '@gateway/db';
import type {
  AuthFlowStore,
  BindResult,
  BoundSessionRequest,
  BoundSessionResult,
  HandoffKey,
  HandoffPresenter,
  HandoffRecord,
  IdentitySessionSelector,
  IssueResult,
  OnboardingMode,
  RedeemAnswer,
  SessionRecord,
  TransactionKey,
  TransactionRecord,
} from './auth-flow-store.js';
import {
  checkBoundSession,
  checkHandoff,
  checkIdentitySelector,
  checkSession,
  checkTransaction,
  isUuid,
  readHandoffSnapshot,
  readPermissions,
  readSessionSnapshot,
} from './auth-flow-store.js';

type Knex = Database['knex'];

const TRANSACTIONS = 'authflow.transactions';
const HANDOFFS = 'authflow.handoffs';
const SESSIONS = 'authflow.sessions';
const ACCEPTED_ONCE = 'authflow.accepted_once';

export type PurgeResult = {
  transactions: number;
  handoffs: number;
  sessions: number;
  acceptedOnce: number;
};

export interface SqlAuthFlowStore extends AuthFlowStore {
  readonly kind: 'sql';
  /**
   * Deletes what can no longer be used, for a periodic job: transactions and sessions with
   * expires_at <= now, revoked sessions, and handoffs that expired and whose transaction has
   * expired too (until then the row is what makes a second issue conflict, and it keeps no
   * sealed session token), and acceptOnce keys past their expiry. Returns the counts of
   * deleted rows.
   */
  purgeExpired(now: number): Promise<PurgeResult>;
}

/**
 * The store on PostgreSQL or PGlite (tables in schema `authflow`, migration
 * 0001-create-login-flow-tables). Every consume, redeem, bind and revoke is one single-row
 * `UPDATE ... WHERE <still usable> RETURNING`: PostgreSQL locks the row and re-checks the
 * condition after a concurrent writer commits, so exactly one of concurrent callers wins, with
 * no read-then-write race. Each query is one statement (PGlite runs one per query).
 */
export function createSqlAuthFlowStore(db: Database): SqlAuthFlowStore {
  const { knex } = db;
  return {
    kind: 'sql',
    ping: () => db.ping(),
    createTransaction: (record) => createTransaction(knex, record),
    consumeTransaction: (state, now) => consumeTransaction(knex, state, now),
    getTransaction: (id) => getTransaction(knex, id),
    bindTransaction: (id, binding) => bindTransaction(knex, id, binding),
    issueHandoff: (record) => issueHandoff(knex, record),
    redeemHandoff: (key, now, presenter, deadline) =>
      redeemHandoff(knex, key, now, presenter, deadline),
    async createSession(record) {
      checkSession(record);
      await knex(SESSIONS).insert(sessionRow(record));
    },
    async createBoundSession(request) {
      checkBoundSession(request);
      return createBoundSession(knex, request);
    },
    getSession: (tokenHash, now) => getSession(knex, tokenHash, now),
    revokeSession: (tokenHash, now) => revokeSession(knex, tokenHash, now),
    listUserSessions: (userId, now) => listUserSessions(knex, userId, now),
    revokeUserSession: (userId, sessionId, now) => revokeUserSession(knex, userId, sessionId, now),
    revokeUserSessions: (userId, now, exceptSessionId) =>
      revokeUserSessions(knex, userId, now, exceptSessionId),
    revokeIdentitySessions: (environmentKey, selector, now) =>
      revokeIdentitySessions(knex, environmentKey, selector, now),
    acceptOnce: (key, until, now) => acceptOnce(knex, key, until, now),
    stripUserPermissions: (userId) => stripUserPermissions(knex, userId),
    purgeExpired: (now) => purgeExpired(knex, now),
  };
}

// --- Transactions ------------------------------------------------------------------------------

async function createTransaction(knex: Knex, record: TransactionRecord): Promise<void> {
  checkTransaction(record);
  await knex(TRANSACTIONS).insert({
    id: record.id,
    state_hash: record.stateHash,
    nonce_hash: record.nonceHash,
    pkce_verifier_encrypted: record.pkceVerifierEncrypted,
    platform_id: record.platformId,
    platform_key: record.platformKey,
    environment_key: record.environmentKey,
    onboarding_mode: record.onboardingMode,
    central_onboarding_enabled: record.centralOnboardingEnabled,
    redirect_pair_id: record.redirectPairId,
    callback_url: record.callbackUrl,
    return_to: record.returnTo,
    created_at: new Date(record.createdAt),
    expires_at: new Date(record.expiresAt),
    consumed_at: dateOrNull(record.consumedAt),
    user_id: record.userId,
    session_id: record.sessionId,
  });
}

async function consumeTransaction(
  knex: Knex,
  state: TransactionKey,
  now: number,
): Promise<TransactionRecord | undefined> {
  if (!isUuid(state.transactionId)) return undefined;
  const at = new Date(now);
  const rows: TransactionRow[] = await knex(TRANSACTIONS)
    .update({ consumed_at: at })
    .where({ state_hash: state.stateHash, id: state.transactionId })
    .whereNull('consumed_at')
    .andWhere('expires_at', '>', at)
    .returning('*');
  return rows[0] && toTransaction(rows[0]);
}

async function getTransaction(knex: Knex, id: string): Promise<TransactionRecord | undefined> {
  if (!isUuid(id)) return undefined;
  const row: TransactionRow | undefined = await knex(TRANSACTIONS)
    .where({ id })
    .andWhere('expires_at', '>', new Date())
    .first();
  return row && toTransaction(row);
}

async function bindTransaction(
  knex: Knex,
  id: string,
  binding: { userId: string; sessionId: string; keepUntil: number },
): Promise<BindResult> {
  if (!isUuid(id)) return 'not_found';
  const now = new Date();
  // One statement: the CTE's UPDATE binds only an unbound row; the outer SELECT reads the
  // statement's snapshot (before the update) to tell "already bound" from "not found".
  const result = await knex.raw<{ rows: Array<{ bound: unknown; present: unknown }> }>(
    `with bound as (
       update ${TRANSACTIONS}
          set user_id = ?, session_id = ?, expires_at = greatest(expires_at, ?)
        where id = ? and consumed_at is not null and user_id is null and expires_at > ?
       returning id
     )
     select (select count(*) from bound) as bound,
            (select count(*) from ${TRANSACTIONS}
              where id = ? and consumed_at is not null and expires_at > ?) as present`,
    [binding.userId, binding.sessionId, new Date(binding.keepUntil), id, now, id, now],
  );
  const row = result.rows[0];
  if (row && toCount(row.bound) === 1) return 'bound';
  return row && toCount(row.present) === 1 ? 'already_bound' : 'not_found';
}

// --- Handoffs ----------------------------------------------------------------------------------

async function issueHandoff(knex: Knex, record: HandoffRecord): Promise<IssueResult> {
  checkHandoff(record);
  const rows: Array<{ code_hash: string }> = await knex(HANDOFFS)
    .insert(handoffRow(record))
    .onConflict('transaction_id')
    .ignore()
    .returning('code_hash');
  return rows.length === 1 ? 'issued' : 'conflict';
}

/**
 * Spec 2.9, 3.2, 4.4, one statement (and so one transaction). `target` locks the handoff row
 * first (waiting behind a concurrent redeem of the same code) and reads its sealed session
 * token as it then is; `clock` then reads the database's clock against the caller's deadline,
 * after any such wait; the UPDATE runs only in time. It marks the row redeemed and clears the
 * sealed token, so the code is never redeemed again (single use: a pending handoff is one
 * whose token is still there). The session is read in the same snapshot.
 */
const REDEEM_HANDOFF = `with target as materialized (
    select session_token_encrypted from ${HANDOFFS}
     where code_hash = ? for update
  ),
  clock as materialized (
    select coalesce(clock_timestamp() < ?::timestamptz, true) as in_time
      from (select count(*) from target) as locked
  ),
  redeemed as (
    update ${HANDOFFS} as h
       set redeemed_at = ?, session_token_encrypted = null
     where h.code_hash = ? and (select in_time from clock)
       and h.session_token_encrypted is not null and h.expires_at > ?
       and h.platform_key = ? and h.callback_url = ?
       and h.session_token_hash is not distinct from ?::text
    returning h.code_hash, h.transaction_id, h.platform_id, h.platform_key,
              h.callback_url, h.user_id, h.session_id, h.session_token_hash, h.snapshot,
              h.created_at, h.expires_at
  )
  select c.in_time, r.*, t.session_token_encrypted,
         s.expires_at as session_expires_at, s.permissions as session_permissions
    from clock c
    left join redeemed r on true
    left join target t on r.code_hash is not null
    left join ${SESSIONS} s
      on s.token_hash = r.session_token_hash and s.revoked_at is null
     and s.expires_at > ?`;

async function redeemHandoff(
  knex: Knex,
  key: HandoffKey,
  now: number,
  presenter: HandoffPresenter,
  deadline: number | undefined,
): Promise<RedeemAnswer> {
  const at = new Date(now);
  const result = await knex.raw<{ rows: RedeemedRow[] }>(REDEEM_HANDOFF, [
    key.codeHash,
    deadline === undefined ? null : new Date(deadline),
    at,
    key.codeHash,
    at,
    presenter.platformKey,
    presenter.callbackUrl,
    key.sessionTokenHash ?? null,
    at,
  ]);
  const row = result.rows[0];
  if (row === undefined) throw new Error('The redeem answered no row');
  if (!row.in_time) return 'too_late';
  const { code_hash } = row;
  if (code_hash === null) return undefined;
  const handoff = toHandoff({ ...row, code_hash });
  if (handoff.sessionTokenHash === undefined) return handoff;
  // The code is spent; its session was revoked or expired since issuance.
  if (row.session_expires_at === null) return undefined;
  return {
    ...handoff,
    session: {
      expiresAt: row.session_expires_at.getTime(),
      permissions: readPermissions(row.session_permissions),
    },
  };
}

// --- Sessions ----------------------------------------------------------------------------------

async function getSession(
  knex: Knex,
  tokenHash: string,
  now: number,
): Promise<SessionRecord | undefined> {
  const row: SessionRow | undefined = await liveSessions(knex, new Date(now))
    .where({ token_hash: tokenHash })
    .first();
  return row && toSession(row);
}

async function revokeSession(
  knex: Knex,
  tokenHash: string,
  now: number,
): Promise<SessionRecord | undefined> {
  const at = new Date(now);
  const rows: SessionRow[] = await liveSessions(knex, at)
    .where({ token_hash: tokenHash })
    .update({ revoked_at: at })
    .returning('*');
  return rows[0] && toSession(rows[0]);
}

async function listUserSessions(knex: Knex, userId: string, now: number): Promise<SessionRecord[]> {
  if (!isUuid(userId)) return [];
  const rows: SessionRow[] = await liveSessions(knex, new Date(now))
    .where({ user_id: userId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'asc' },
    ]);
  return rows.map(toSession);
}

async function revokeUserSession(
  knex: Knex,
  userId: string,
  sessionId: string,
  now: number,
): Promise<SessionRecord | undefined> {
  if (!isUuid(userId) || !isUuid(sessionId)) return undefined;
  const at = new Date(now);
  const rows: SessionRow[] = await liveSessions(knex, at)
    .where({ user_id: userId, id: sessionId })
    .update({ revoked_at: at })
    .returning('*');
  return rows[0] && toSession(rows[0]);
}

async function revokeUserSessions(
  knex: Knex,
  userId: string,
  now: number,
  exceptSessionId: string | undefined,
): Promise<number> {
  if (!isUuid(userId)) return 0;
  const at = new Date(now);
  const query = liveSessions(knex, at).where({ user_id: userId });
  // A malformed id is no session's: nothing is kept.
  if (exceptSessionId !== undefined && isUuid(exceptSessionId)) {
    query.andWhereNot({ id: exceptSessionId });
  }
  const rows: Array<{ id: string }> = await query.update({ revoked_at: at }).returning('id');
  return rows.length;
}

/** One statement; the sid's sessions through the partial index (migration 0007). */
async function revokeIdentitySessions(
  knex: Knex,
  environmentKey: string,
  selector: IdentitySessionSelector,
  now: number,
): Promise<SessionRecord[]> {
  checkIdentitySelector(selector);
  const { identitySessionId, userId } = selector;
  if (userId !== undefined && !isUuid(userId)) return [];
  const at = new Date(now);
  const query = liveSessions(knex, at).where({ environment_key: environmentKey });
  if (identitySessionId !== undefined) query.andWhere({ identity_session_id: identitySessionId });
  if (userId !== undefined) query.andWhere({ user_id: userId });
  const rows: SessionRow[] = await query.update({ revoked_at: at }).returning('*');
  return rows.map(toSession);
}

/**
 * One statement: inserts the key, or takes over its row when that row has expired. The same
 * statement deletes the other expired rows (few: a key lives as long as its token), skipping
 * rows a concurrent call holds, so two calls never wait on each other's purge.
 */
const ACCEPT_ONCE = `with purged as (
    delete from ${ACCEPTED_ONCE} where key in (
      select key from ${ACCEPTED_ONCE} where expires_at <= ? and key <> ?
         for update skip locked
    )
  ),
  accepted as (
    insert into ${ACCEPTED_ONCE} (key, expires_at) values (?, ?)
    on conflict (key) do update set expires_at = excluded.expires_at
     where ${ACCEPTED_ONCE}.expires_at <= ?
    returning key
  )
  select count(*) as accepted from accepted`;

async function acceptOnce(knex: Knex, key: string, until: number, now: number): Promise<boolean> {
  if (now >= until) return false;
  const at = new Date(now);
  const result = await knex.raw<{ rows: Array<{ accepted: unknown }> }>(ACCEPT_ONCE, [
    at,
    key,
    key,
    new Date(until),
    at,
  ]);
  return toCount(result.rows[0]?.accepted) === 1;
}

async function stripUserPermissions(knex: Knex, userId: string): Promise<number> {
  if (!isUuid(userId)) return 0;
  const rows: Array<{ id: string }> = await liveSessions(knex, new Date())
    .where({ user_id: userId })
    .andWhereRaw("permissions <> '[]'::jsonb")
    .update({ permissions: '[]' })
    .returning('id');
  return rows.length;
}

async function purgeExpired(knex: Knex, now: number): Promise<PurgeResult> {
  const at = new Date(now);
  // An expired handoff can no longer be redeemed; its sealed token has no use left.
  await knex(HANDOFFS)
    .where('expires_at', '<=', at)
    .whereNotNull('session_token_encrypted')
    .update({ session_token_encrypted: null });
  const handoffs = await knex(HANDOFFS)
    .where('expires_at', '<=', at)
    .whereNotExists((query) => {
      query
        .select(knex.raw('1'))
        .from(`${TRANSACTIONS} as t`)
        .whereRaw(`t.id = ${HANDOFFS}.transaction_id`)
        .andWhere('t.expires_at', '>', at);
    })
    .del();
  const transactions = await knex(TRANSACTIONS).where('expires_at', '<=', at).del();
  const sessions = await knex(SESSIONS)
    .where('expires_at', '<=', at)
    .orWhereNotNull('revoked_at')
    .del();
  const acceptedOnce = await knex(ACCEPTED_ONCE).where('expires_at', '<=', at).del();
  return { transactions, handoffs, sessions, acceptedOnce };
}

function liveSessions(knex: Knex, at: Date) {
  return knex(SESSIONS).whereNull('revoked_at').andWhere('expires_at', '>', at);
}

// --- createBoundSession: one statement ---------------------------------------------------------
// The bind is the statement's UPDATE; the session and handoff INSERTs run only when it bound
// a row, and a failing INSERT (a unique violation) undoes the whole statement, so it is all or
// nothing. `tx` and `free` read the statement's snapshot (before the update) to tell
// 'already_bound', 'not_found' and 'conflict' apart. A concurrent bind of the same row waits
// for the row lock and then finds user_id set, so exactly one caller binds.

const BIND_CTES = `
  tx as (
    select user_id from ${TRANSACTIONS}
     where id = ? and consumed_at is not null and expires_at > ?
  ),
  bound as (
    update ${TRANSACTIONS}
       set user_id = ?, session_id = ?, expires_at = greatest(expires_at, ?)
     where id = ? and consumed_at is not null and user_id is null and expires_at > ?
       and (select ok from free)
    returning id
  ),
  new_session as (
    insert into ${SESSIONS} (id, token_hash, user_id, environment_key, platform_key, permissions,
                             id_token_encrypted, identity_session_id, snapshot, created_at,
                             expires_at)
    select ?::uuid, ?::text, ?::uuid, ?::text, ?::text, ?::jsonb, ?::text, ?::text, ?::jsonb,
           ?::timestamptz, ?::timestamptz
     where exists (select 1 from bound)
    returning id
  )`;

const BIND_ANSWER = `
  select (select count(*) from bound) as bound,
         (select count(*) from tx) as present,
         (select count(*) from tx where user_id is not null) as taken,
         (select ok from free) as free`;

const CREATE_BOUND_SESSION = `
  with free as (select true as ok),
  ${BIND_CTES}
  ${BIND_ANSWER}`;

const CREATE_BOUND_SESSION_WITH_HANDOFF = `
  with free as (
    select not exists (select 1 from ${HANDOFFS} where transaction_id = ?) as ok
  ),
  ${BIND_CTES},
  new_handoff as (
    insert into ${HANDOFFS} (code_hash, transaction_id, platform_id, platform_key, callback_url,
                             user_id, session_id, session_token_encrypted, session_token_hash,
                             snapshot, created_at, expires_at)
    select ?::text, ?::uuid, ?::uuid, ?::text, ?::text, ?::uuid, ?::uuid, ?::text, ?::text,
           ?::jsonb, ?::timestamptz, ?::timestamptz
     where exists (select 1 from bound)
    returning code_hash
  )
  ${BIND_ANSWER}`;

/** The unique index that allows one handoff per transaction (migration 0001). */
const ONE_HANDOFF_PER_TRANSACTION = 'handoffs_transaction_id_unique';

async function createBoundSession(
  knex: Knex,
  request: BoundSessionRequest,
): Promise<BoundSessionResult> {
  const { session, handoff } = request;
  const now = new Date();
  const row = sessionRow(session);
  const bindings: Array<string | Date | null> = [
    request.transactionId,
    now,
    session.userId,
    session.id,
    new Date(request.keepUntil),
    request.transactionId,
    now,
    row.id,
    row.token_hash,
    row.user_id,
    row.environment_key,
    row.platform_key,
    row.permissions,
    row.id_token_encrypted,
    row.identity_session_id,
    row.snapshot,
    row.created_at,
    row.expires_at,
  ];
  let sql = CREATE_BOUND_SESSION;
  if (handoff !== undefined) {
    const h = handoffRow(handoff);
    sql = CREATE_BOUND_SESSION_WITH_HANDOFF;
    bindings.unshift(request.transactionId);
    bindings.push(
      h.code_hash,
      h.transaction_id,
      h.platform_id,
      h.platform_key,
      h.callback_url,
      h.user_id,
      h.session_id,
      h.session_token_encrypted,
      h.session_token_hash,
      h.snapshot,
      h.created_at,
      h.expires_at,
    );
  }
  let answer: BoundSessionAnswer | undefined;
  try {
    const result = await knex.raw<{ rows: BoundSessionAnswer[] }>(sql, bindings);
    answer = result.rows[0];
  } catch (error) {
    // A plain issueHandoff for the same transaction committed first (spec 2.9).
    if (isUniqueViolation(error, ONE_HANDOFF_PER_TRANSACTION)) return 'conflict';
    throw error;
  }
  if (answer === undefined) throw new Error('createBoundSession answered no row');
  if (toCount(answer.bound) === 1) return 'bound';
  if (toCount(answer.present) === 0) return 'not_found';
  if (toCount(answer.taken) === 0 && answer.free === false) return 'conflict';
  return 'already_bound';
}

type BoundSessionAnswer = { bound: unknown; present: unknown; taken: unknown; free: boolean };

function sessionRow(record: SessionRecord) {
  return {
    id: record.id,
    token_hash: record.tokenHash,
    user_id: record.userId,
    environment_key: record.environmentKey,
    platform_key: record.platformKey,
    permissions: JSON.stringify(record.permissions),
    id_token_encrypted: record.idTokenEncrypted,
    identity_session_id: record.identitySessionId,
    snapshot: JSON.stringify(record.snapshot),
    created_at: new Date(record.createdAt),
    expires_at: new Date(record.expiresAt),
  };
}

function handoffRow(record: HandoffRecord) {
  return {
    code_hash: record.codeHash,
    transaction_id: record.transactionId,
    platform_id: record.platformId,
    platform_key: record.platformKey,
    callback_url: record.callbackUrl,
    user_id: record.userId,
    session_id: record.sessionId,
    session_token_encrypted: record.sessionTokenEncrypted,
    session_token_hash: record.sessionTokenHash ?? null,
    snapshot: JSON.stringify(record.snapshot),
    created_at: new Date(record.createdAt),
    expires_at: new Date(record.expiresAt),
  };
}

// --- Rows ------------------------------------------------------------------------------------

type TransactionRow = {
  id: string;
  state_hash: string;
  nonce_hash: string;
  pkce_verifier_encrypted: string;
  platform_id: string;
  platform_key: string;
  environment_key: string;
  onboarding_mode: string;
  central_onboarding_enabled: boolean | null;
  redirect_pair_id: string;
  callback_url: string;
  return_to: string;
  created_at: Date;
  expires_at: Date;
  consumed_at: Date | null;
  user_id: string | null;
  session_id: string | null;
};

type HandoffRow = {
  code_hash: string;
  transaction_id: string;
  platform_id: string;
  platform_key: string;
  callback_url: string;
  user_id: string;
  session_id: string;
  session_token_encrypted: string | null;
  session_token_hash: string | null;
  snapshot: unknown;
  created_at: Date;
  expires_at: Date;
};

/** The redeem's one row: `in_time`, and the columns of the redeemed handoff (null for none). */
type RedeemedRow = Omit<HandoffRow, 'code_hash'> & {
  code_hash: string | null;
  in_time: boolean;
  session_expires_at: Date | null;
  session_permissions: unknown;
};

type SessionRow = {
  id: string;
  token_hash: string;
  user_id: string;
  environment_key: string;
  platform_key: string | null;
  permissions: unknown;
  id_token_encrypted: string | null;
  identity_session_id: string | null;
  snapshot: unknown;
  created_at: Date;
  expires_at: Date;
};

function toTransaction(row: TransactionRow): TransactionRecord {
  return {
    id: row.id,
    stateHash: row.state_hash,
    nonceHash: row.nonce_hash,
    pkceVerifierEncrypted: row.pkce_verifier_encrypted,
    platformId: row.platform_id,
    platformKey: row.platform_key,
    environmentKey: row.environment_key,
    onboardingMode: toOnboardingMode(row.onboarding_mode),
    centralOnboardingEnabled: required(
      row.central_onboarding_enabled,
      'central_onboarding_enabled',
    ),
    redirectPairId: row.redirect_pair_id,
    callbackUrl: row.callback_url,
    returnTo: row.return_to,
    createdAt: row.created_at.getTime(),
    expiresAt: row.expires_at.getTime(),
    consumedAt: row.consumed_at === null ? null : row.consumed_at.getTime(),
    userId: row.user_id,
    sessionId: row.session_id,
  };
}

function toHandoff(row: HandoffRow): HandoffRecord {
  if (row.session_token_encrypted === null) {
    throw new Error('A pending handoff has no session token');
  }
  return {
    codeHash: row.code_hash,
    transactionId: row.transaction_id,
    platformId: row.platform_id,
    platformKey: row.platform_key,
    callbackUrl: row.callback_url,
    userId: row.user_id,
    sessionId: row.session_id,
    sessionTokenEncrypted: row.session_token_encrypted,
    ...(row.session_token_hash === null ? {} : { sessionTokenHash: row.session_token_hash }),
    snapshot: readHandoffSnapshot(row.snapshot),
    createdAt: row.created_at.getTime(),
    expiresAt: row.expires_at.getTime(),
  };
}

function toSession(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    tokenHash: row.token_hash,
    userId: row.user_id,
    environmentKey: row.environment_key,
    platformKey: row.platform_key,
    permissions: readPermissions(row.permissions),
    idTokenEncrypted: row.id_token_encrypted,
    identitySessionId: row.identity_session_id,
    snapshot: readSessionSnapshot(row.snapshot),
    createdAt: row.created_at.getTime(),
    expiresAt: row.expires_at.getTime(),
  };
}

function toOnboardingMode(value: string): OnboardingMode {
  if (value === 'none' || value === 'platform' || value === 'central') return value;
  throw new Error(`Unknown onboarding mode in authflow.transactions: ${value}`);
}

/** A column migration 0004 added as nullable that every row written since carries. */
function required<T>(value: T | null, column: string): T {
  if (value === null) throw new Error(`authflow.transactions.${column} is null`);
  return value;
}

function dateOrNull(epochMs: number | null): Date | null {
  return epochMs === null ? null : new Date(epochMs);
}
