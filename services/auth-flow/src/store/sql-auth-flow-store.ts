import type { Database } from '@gateway/db';
import { toCount } from '@gateway/db';
import type {
  AuthFlowStore,
  HandoffRecord,
  OnboardingMode,
  SessionRecord,
  TransactionRecord,
} from './auth-flow-store.js';
import { checkHandoff, checkSession, checkTransaction, isUuid } from './auth-flow-store.js';

type Knex = Database['knex'];

const TRANSACTIONS = 'authflow.transactions';
const HANDOFFS = 'authflow.handoffs';
const SESSIONS = 'authflow.sessions';

export type PurgeResult = { transactions: number; handoffs: number; sessions: number };

export interface SqlAuthFlowStore extends AuthFlowStore {
  readonly kind: 'sql';
  /**
   * Deletes what can no longer be used, for a periodic job: transactions and sessions with
   * expires_at <= now, revoked sessions, and handoffs that expired and whose transaction has
   * expired too (until then the row is what makes a second issue conflict). Returns the counts.
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

    async createTransaction(record) {
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
        redirect_pair_id: record.redirectPairId,
        callback_url: record.callbackUrl,
        return_to: record.returnTo,
        created_at: new Date(record.createdAt),
        expires_at: new Date(record.expiresAt),
        consumed_at: dateOrNull(record.consumedAt),
        user_id: record.userId,
        session_id: record.sessionId,
      });
    },

    async consumeTransaction(stateHash, now) {
      const at = new Date(now);
      const rows: TransactionRow[] = await knex(TRANSACTIONS)
        .update({ consumed_at: at })
        .where({ state_hash: stateHash })
        .whereNull('consumed_at')
        .andWhere('expires_at', '>', at)
        .returning('*');
      return rows[0] && toTransaction(rows[0]);
    },

    async getTransaction(id) {
      if (!isUuid(id)) return undefined;
      const row: TransactionRow | undefined = await knex(TRANSACTIONS)
        .where({ id })
        .andWhere('expires_at', '>', new Date())
        .first();
      return row && toTransaction(row);
    },

    async bindTransaction(id, binding) {
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
    },

    async issueHandoff(record) {
      checkHandoff(record);
      const rows: Array<{ code_hash: string }> = await knex(HANDOFFS)
        .insert({
          code_hash: record.codeHash,
          transaction_id: record.transactionId,
          platform_id: record.platformId,
          platform_key: record.platformKey,
          callback_url: record.callbackUrl,
          user_id: record.userId,
          session_id: record.sessionId,
          session_token_encrypted: record.sessionTokenEncrypted,
          created_at: new Date(record.createdAt),
          expires_at: new Date(record.expiresAt),
        })
        .onConflict('transaction_id')
        .ignore()
        .returning('code_hash');
      return rows.length === 1 ? 'issued' : 'conflict';
    },

    async redeemHandoff(codeHash, now) {
      const at = new Date(now);
      // Marks the row redeemed and clears the encrypted token in the same statement; the
      // self-join hands back the token as it was before the update.
      const result = await knex.raw<{ rows: HandoffRow[] }>(
        `update ${HANDOFFS} as h
            set redeemed_at = ?, session_token_encrypted = null
           from ${HANDOFFS} as old
          where h.code_hash = ? and old.code_hash = h.code_hash
            and h.redeemed_at is null and h.expires_at > ?
         returning h.code_hash, h.transaction_id, h.platform_id, h.platform_key, h.callback_url,
                   h.user_id, h.session_id, old.session_token_encrypted, h.created_at,
                   h.expires_at`,
        [at, codeHash, at],
      );
      const row = result.rows[0];
      return row && toHandoff(row);
    },

    async createSession(record) {
      checkSession(record);
      await knex(SESSIONS).insert({
        id: record.id,
        token_hash: record.tokenHash,
        user_id: record.userId,
        environment_key: record.environmentKey,
        platform_key: record.platformKey,
        permissions: JSON.stringify(record.permissions),
        id_token_encrypted: record.idTokenEncrypted,
        created_at: new Date(record.createdAt),
        expires_at: new Date(record.expiresAt),
      });
    },

    async getSession(tokenHash, now) {
      const row: SessionRow | undefined = await liveSessions(knex, new Date(now))
        .where({ token_hash: tokenHash })
        .first();
      return row && toSession(row);
    },

    async revokeSession(tokenHash, now) {
      const at = new Date(now);
      const rows: SessionRow[] = await liveSessions(knex, at)
        .where({ token_hash: tokenHash })
        .update({ revoked_at: at })
        .returning('*');
      return rows[0] && toSession(rows[0]);
    },

    async revokeUserSessions(userId, now) {
      if (!isUuid(userId)) return 0;
      const at = new Date(now);
      const rows: Array<{ id: string }> = await liveSessions(knex, at)
        .where({ user_id: userId })
        .update({ revoked_at: at })
        .returning('id');
      return rows.length;
    },

    async stripUserPermissions(userId) {
      if (!isUuid(userId)) return 0;
      const rows: Array<{ id: string }> = await liveSessions(knex, new Date())
        .where({ user_id: userId })
        .andWhereRaw("permissions <> '[]'::jsonb")
        .update({ permissions: '[]' })
        .returning('id');
      return rows.length;
    },

    async purgeExpired(now) {
      const at = new Date(now);
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
      return { transactions, handoffs, sessions };
    },
  };
}

function liveSessions(knex: Knex, at: Date) {
  return knex(SESSIONS).whereNull('revoked_at').andWhere('expires_at', '>', at);
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
  created_at: Date;
  expires_at: Date;
};

type SessionRow = {
  id: string;
  token_hash: string;
  user_id: string;
  environment_key: string;
  platform_key: string | null;
  permissions: unknown;
  id_token_encrypted: string | null;
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
    createdAt: row.created_at.getTime(),
    expiresAt: row.expires_at.getTime(),
  };
}

function toSession(row: SessionRow): SessionRecord {
  const { permissions } = row;
  if (!Array.isArray(permissions) || !permissions.every((p) => typeof p === 'string')) {
    throw new Error('Malformed session permissions');
  }
  return {
    id: row.id,
    tokenHash: row.token_hash,
    userId: row.user_id,
    environmentKey: row.environment_key,
    platformKey: row.platform_key,
    permissions: permissions as string[],
    idTokenEncrypted: row.id_token_encrypted,
    createdAt: row.created_at.getTime(),
    expiresAt: row.expires_at.getTime(),
  };
}

function toOnboardingMode(value: string): OnboardingMode {
  if (value === 'none' || value === 'platform' || value === 'central') return value;
  throw new Error(`Unknown onboarding mode in authflow.transactions: ${value}`);
}

function dateOrNull(epochMs: number | null): Date | null {
  return epochMs === null ? null : new Date(epochMs);
}
