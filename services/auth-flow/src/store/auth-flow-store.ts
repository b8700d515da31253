// The short-lived state of the login flow (spec 2.7-2.9, 3.1-3.3): authentication
// transactions, handoff codes and gateway sessions. Secret values arrive already hashed
// (state, nonce, handoff code, session token) or encrypted (PKCE verifier, pending session
// token, ID token); a store never sees a raw one. Its job is atomicity and expiry.
//
// Two implementations pass one contract test suite (auth-flow-store.test.ts): Redis with a Lua
// script for every check-and-set (split mode), and SQL on PostgreSQL or PGlite (the embedded
// default). All times are epoch milliseconds.

export type OnboardingMode = 'none' | 'platform' | 'central';

export type TransactionRecord = {
  /** uuid (transactionId). */
  id: string;
  /** SHA-256 base64url of `state`; unique lookup key. */
  stateHash: string;
  nonceHash: string;
  pkceVerifierEncrypted: string;
  platformId: string;
  platformKey: string;
  /** The platform's identity environment, captured at start (spec 4.2 step 2). */
  environmentKey: string;
  onboardingMode: OnboardingMode;
  redirectPairId: string;
  callbackUrl: string;
  /** Normalized absolute URL. */
  returnTo: string;
  createdAt: number;
  expiresAt: number;
  consumedAt: number | null;
  /** Bound at the callback. */
  userId: string | null;
  sessionId: string | null;
};

export type HandoffRecord = {
  /** SHA-256 of `handoff_...`, the lookup key. */
  codeHash: string;
  transactionId: string;
  platformId: string;
  platformKey: string;
  /** The pair callback the code was sent to (spec 4.4). */
  callbackUrl: string;
  userId: string;
  sessionId: string;
  /** The pending session token, encrypted at rest. */
  sessionTokenEncrypted: string;
  createdAt: number;
  expiresAt: number;
};

export type SessionRecord = {
  id: string;
  /** Lookup key. */
  tokenHash: string;
  userId: string;
  environmentKey: string;
  /** The platform whose login created it. */
  platformKey: string | null;
  /** Snapshot taken at creation (spec 2.6). */
  permissions: string[];
  idTokenEncrypted: string | null;
  createdAt: number;
  expiresAt: number;
};

export type BindResult = 'bound' | 'already_bound' | 'not_found';
export type IssueResult = 'issued' | 'conflict';

export interface AuthFlowStore {
  readonly kind: 'redis' | 'sql';
  /** Rejects when the backing store does not answer. */
  ping(): Promise<void>;
  /**
   * Saves a new transaction; it expires at expiresAt. Rejects when a transaction with the same
   * id or state hash exists.
   */
  createTransaction(record: TransactionRecord): Promise<void>;
  /**
   * Spec 3.1: atomically marks the transaction with this state hash consumed (consumedAt = now)
   * and returns it, only if it exists, now < expiresAt and it was not consumed before;
   * otherwise undefined. Of N concurrent calls exactly one gets the record.
   */
  consumeTransaction(stateHash: string, now: number): Promise<TransactionRecord | undefined>;
  /** The transaction, consumed or not, until it expires; undefined when unknown or expired. */
  getTransaction(id: string): Promise<TransactionRecord | undefined>;
  /**
   * Attaches the user and session to a consumed, unexpired transaction (atomic check-and-set):
   * 'bound'; 'already_bound' when a user (the same or another) is already bound; 'not_found'
   * when there is no such consumed, unexpired transaction. Extends the expiry to keepUntil when
   * that is later, so resume can read it after onboarding pages.
   */
  bindTransaction(
    id: string,
    binding: { userId: string; sessionId: string; keepUntil: number },
  ): Promise<BindResult>;
  /**
   * Spec 2.9/3.2: at most one handoff per transaction. 'conflict' when one was ever issued for
   * that transaction (even if redeemed or expired), for as long as the transaction (or the
   * handoff) has not expired.
   */
  issueHandoff(record: HandoffRecord): Promise<IssueResult>;
  /**
   * Atomically single-use: returns the pending handoff and ends it when now < expiresAt;
   * undefined when unknown, expired or already redeemed. Of N concurrent calls exactly one wins.
   */
  redeemHandoff(codeHash: string, now: number): Promise<HandoffRecord | undefined>;
  /** Saves a new session. Rejects when a session with the same token hash (or id) exists. */
  createSession(record: SessionRecord): Promise<void>;
  /** undefined when unknown, revoked or expired (now >= expiresAt). */
  getSession(tokenHash: string, now: number): Promise<SessionRecord | undefined>;
  /** Revokes one session; returns it if it was live, else undefined. Idempotent. */
  revokeSession(tokenHash: string, now: number): Promise<SessionRecord | undefined>;
  /** Revokes every live session of a user; returns how many were live. */
  revokeUserSessions(userId: string, now: number): Promise<number>;
  /**
   * Spec 3.3: empties the permissions of the user's live sessions at once (they stay live).
   * Returns how many live sessions held permissions.
   */
  stripUserPermissions(userId: string): Promise<number>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Lookups by id answer "not found" for a malformed id, in both implementations. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/**
 * Both implementations refuse to save a record whose ids are not uuids (the SQL columns are
 * `uuid`), so a caller's bug fails the same way whichever store runs.
 */
export function requireUuids(record: string, ids: Record<string, string | null>): void {
  for (const [name, value] of Object.entries(ids)) {
    if (value !== null && !isUuid(value)) {
      throw new TypeError(`${record}.${name} must be a uuid`);
    }
  }
}

export function checkTransaction(record: TransactionRecord): void {
  requireUuids('TransactionRecord', {
    id: record.id,
    platformId: record.platformId,
    redirectPairId: record.redirectPairId,
    userId: record.userId,
    sessionId: record.sessionId,
  });
}

export function checkHandoff(record: HandoffRecord): void {
  requireUuids('HandoffRecord', {
    transactionId: record.transactionId,
    platformId: record.platformId,
    userId: record.userId,
    sessionId: record.sessionId,
  });
}

export function checkSession(record: SessionRecord): void {
  requireUuids('SessionRecord', { id: record.id, userId: record.userId });
}
