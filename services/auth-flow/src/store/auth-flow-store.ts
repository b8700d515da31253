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
  /**
   * The platform's `centralOnboardingEnabled` at start, answered as the exchange's
   * `canCompleteCentrally` (spec 4.4) without asking the registry again.
   */
  centralOnboardingEnabled: boolean;
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
  /**
   * The session token, encrypted at rest (bound to `handoff:<codeHash>`) while the handoff is
   * pending (spec 2.9); the redeem that spends the code takes it away.
   */
  sessionTokenEncrypted: string;
  /**
   * SHA-256 of the pending session token (the session's lookup key, not a secret): the redeem
   * refuses a code whose session was revoked or expired since issuance. The login always
   * sets it; without it a redeem checks no session and the exchange refuses the code.
   */
  sessionTokenHash?: string;
  /** What the exchange answers, known at issuance (spec 4.4). */
  snapshot: HandoffSnapshot;
  createdAt: number;
  expiresAt: number;
};

/**
 * The exchange's answer (spec 4.4) as it stood when the handoff was issued, so the exchange
 * reads nothing else: it is at most AUTH_HANDOFF_TTL_SECONDS old when redeemed. No secrets:
 * the session token travels encrypted beside it, and the session's id, expiry and
 * permissions are read from the live session by the redeem.
 */
export type HandoffSnapshot = {
  user: { sub: string; issuer: string; picture?: string };
  environment: { key: string; tier: string };
  onboarding: {
    status: string;
    requirementVersion: number;
    missingFields: string[];
    canCompleteCentrally: boolean;
  };
  returnTo: string;
};

/**
 * Who presents a handoff code at the exchange (spec 4.4, 5): the platform and the callback
 * its key serves. A code is redeemed only by the platform and callback it was sent to.
 */
export type HandoffPresenter = { platformKey: string; callbackUrl: string };

/**
 * What a presented code names (slot-tags.ts, handoffKeyOf): the code's hash, and the token
 * hash of the session the code carries as its locator (absent when it carries none). A redeem
 * finds a handoff only when both are the handoff's.
 */
export type HandoffKey = { codeHash: string; sessionTokenHash?: string };

/**
 * A redeemed handoff. `session` is present when the handoff names its session
 * (`sessionTokenHash`): the session as it is at the redeem, live by construction.
 */
export type RedeemedHandoff = HandoffRecord & {
  session?: { expiresAt: number; permissions: string[] };
};

/**
 * What a redeem answers: the handoff, undefined when there is none to redeem for this
 * presenter, or 'too_late' when the caller's deadline had passed by the store's clock as the
 * redeem ran (nothing changed).
 */
export type RedeemAnswer = RedeemedHandoff | 'too_late' | undefined;

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
  /**
   * The `sid` claim of the ID token the session was signed in with (OpenID Connect Back-Channel
   * Logout 1.0 §2.1, §2.4): the identity provider's session, which a logout token names.
   * null when the ID token had no string `sid`, and for sessions stored before it was recorded.
   */
  identitySessionId: string | null;
  /**
   * What introspection answers about the user and the environment (spec 4.5), taken at
   * creation, so an introspection reads only the user's status.
   */
  snapshot: SessionSnapshot;
  createdAt: number;
  expiresAt: number;
};

export type SessionSnapshot = {
  issuer: string;
  subject: string;
  email: string;
  emailVerified: boolean;
  environmentTier: string;
};

/**
 * Which sessions of an environment a back-channel logout ends (revokeIdentitySessions): those
 * of an identity session (`sid`), narrowed to one user when `userId` is given too, or all of a
 * user's (`sub`).
 */
export type IdentitySessionSelector = { identitySessionId?: string; userId?: string };

/**
 * What a presented `state` names (slot-tags.ts, transactionKeyOf): its hash and the
 * transaction id it carries. A consume finds a transaction only when both are its own.
 */
export type TransactionKey = { stateHash: string; transactionId: string };

export type BindResult = 'bound' | 'already_bound' | 'not_found';
export type IssueResult = 'issued' | 'conflict';
export type BoundSessionResult = BindResult | 'conflict';

/** The callback's writes (spec 4.2 steps 4, 7 and 8), for createBoundSession. */
export type BoundSessionRequest = {
  transactionId: string;
  /** The transaction stays readable until then (resume after onboarding pages). */
  keepUntil: number;
  /** Bound to the transaction with its userId and id. */
  session: SessionRecord;
  /** Issued in the same step when the login goes straight to the platform. */
  handoff?: HandoffRecord;
};

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
   * Spec 3.1, in one atomic step and one round trip: marks the transaction with this state
   * hash and id consumed (consumedAt = now) and returns it, only if it exists, now <
   * expiresAt and it was not consumed before; otherwise undefined. Of N concurrent calls
   * exactly one gets the record.
   */
  consumeTransaction(state: TransactionKey, now: number): Promise<TransactionRecord | undefined>;
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
   * Spec 2.9, 3.2, 4.4, in one atomic step and one round trip: atomically single use. Redeems
   * the handoff when now < expiresAt, `key.sessionTokenHash` is the session it names (both
   * absent, or equal) and it was sent to the presenter's platform and callback; undefined
   * when unknown, expired or used. A code presented by another platform or callback is left
   * as it was (still redeemable by its own), and the answer is undefined.
   * The first redeem ends the handoff, whatever it answers: every later one, by any
   * presenter, answers undefined (spec 3.2: used → 404). When the handoff names its session,
   * that session must be live at now (not revoked, now < its expiresAt): the answer then
   * carries its expiry and current permissions (spec 3.3 strips them at once); a session
   * revoked or expired gives undefined. A handoff that names no session is answered without
   * `session`. Of N concurrent redeems exactly one gets the handoff.
   * `deadline` (epoch ms, the caller's clock) is when the caller stops waiting for the answer:
   * when the store's own clock has reached it as the redeem runs, the answer is 'too_late' and
   * nothing changed, so a redeem that waited in a queue or a frozen server does not spend a
   * code whose caller already answered "unavailable". Without one there is no such check.
   */
  redeemHandoff(
    key: HandoffKey,
    now: number,
    presenter: HandoffPresenter,
    deadline?: number,
  ): Promise<RedeemAnswer>;
  /** Saves a new session. Rejects when a session with the same token hash (or id) exists. */
  createSession(record: SessionRecord): Promise<void>;
  /**
   * The callback's writes in one atomic step, all or nothing: binds the transaction to the
   * session's user and id (as bindTransaction), saves the session (as createSession) and, when given, issues the handoff (as
   * issueHandoff). 'bound' when everything was written; otherwise nothing was and the answer
   * is bindTransaction's 'already_bound' or 'not_found', or 'conflict' when a handoff was
   * already issued for the transaction. Rejects, writing nothing, when a session with the same
   * token hash or a handoff with the same code hash exists. One round trip.
   */
  createBoundSession(request: BoundSessionRequest): Promise<BoundSessionResult>;
  /** undefined when unknown, revoked or expired (now >= expiresAt). */
  getSession(tokenHash: string, now: number): Promise<SessionRecord | undefined>;
  /** Revokes one session; returns it if it was live, else undefined. Idempotent. */
  revokeSession(tokenHash: string, now: number): Promise<SessionRecord | undefined>;
  /**
   * The user's live sessions (not revoked, now < expiresAt), newest first (createdAt
   * descending). Another user's sessions are never among them; a malformed id has none.
   */
  listUserSessions(userId: string, now: number): Promise<SessionRecord[]>;
  /**
   * Revokes the live session with this id when it is the user's; returns it, or undefined when
   * there is no such live session of that user (another user's session id ends nothing).
   * Atomic per session: of concurrent calls exactly one returns it.
   */
  revokeUserSession(
    userId: string,
    sessionId: string,
    now: number,
  ): Promise<SessionRecord | undefined>;
  /**
   * Revokes every live session of a user, but the one with id `exceptSessionId` when given;
   * returns how many were live and revoked. Each session is revoked atomically; the sessions
   * one by one on Redis (a repeated call finishes what a stopped one left), in one statement
   * on SQL.
   */
  revokeUserSessions(userId: string, now: number, exceptSessionId?: string): Promise<number>;
  /**
   * Back-channel logout (OpenID Connect Back-Channel Logout 1.0 §2.4, §2.7): revokes the live
   * sessions of the environment that the logout token names and returns them. With
   * `identitySessionId` (the token's `sid`): the sessions signed in with that identity session
   * (only the user's when `userId` is given too), found through an index, not a scan. With only
   * `userId` (the user its `sub` names): every live session of that user in that environment.
   * Sessions of other environments are never touched. Rejects (TypeError) when neither is given.
   * Each session is revoked atomically, so of concurrent calls exactly one returns it.
   */
  revokeIdentitySessions(
    environmentKey: string,
    selector: IdentitySessionSelector,
    now: number,
  ): Promise<SessionRecord[]>;
  /**
   * Single use of a key (a logout token's `jti`, Back-Channel Logout §2.6): true the first time
   * the key is presented while now < until, false for every later call until `until` passes
   * (the store forgets the key then) and false when now >= until. Atomic: of concurrent calls
   * exactly one answers true.
   */
  acceptOnce(key: string, until: number, now: number): Promise<boolean>;
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

/** A logout token names a `sid`, a `sub`, or both (Back-Channel Logout §2.4); never neither. */
export function checkIdentitySelector(selector: IdentitySessionSelector): void {
  if (selector.identitySessionId === undefined && selector.userId === undefined) {
    throw new TypeError('revokeIdentitySessions needs an identitySessionId or a userId');
  }
}

/** Newest first, the order listUserSessions answers in (ties by id, so both stores agree). */
export function newestFirst(a: SessionRecord, b: SessionRecord): number {
  return b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The handoff of createBoundSession must belong to its transaction, user and session. */
export function checkBoundSession(request: BoundSessionRequest): void {
  checkSession(request.session);
  requireUuids('BoundSessionRequest', { transactionId: request.transactionId });
  const { handoff, session } = request;
  if (handoff === undefined) return;
  checkHandoff(handoff);
  if (
    handoff.transactionId !== request.transactionId ||
    handoff.userId !== session.userId ||
    handoff.sessionId !== session.id ||
    (handoff.sessionTokenHash !== undefined && handoff.sessionTokenHash !== session.tokenHash)
  ) {
    throw new TypeError('BoundSessionRequest.handoff must name its transaction and session');
  }
}

// --- Reading stored snapshots (JSON from Redis or jsonb from SQL) -----------------------------

type Fields = Record<string, unknown>;

function fieldsOf(value: unknown, what: string): Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`Malformed ${what}`);
  }
  return value as Fields;
}

function stringOf(fields: Fields, name: string, what: string): string {
  const value = fields[name];
  if (typeof value !== 'string') throw new Error(`Malformed ${what}: ${name}`);
  return value;
}

function stringsOf(fields: Fields, name: string, what: string): string[] {
  const value = fields[name];
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new Error(`Malformed ${what}: ${name}`);
  }
  return value as string[];
}

/** A stored HandoffSnapshot, checked field by field. */
export function readHandoffSnapshot(value: unknown): HandoffSnapshot {
  const what = 'handoff snapshot';
  const top = fieldsOf(value, what);
  const user = fieldsOf(top.user, what);
  const environment = fieldsOf(top.environment, what);
  const onboarding = fieldsOf(top.onboarding, what);
  const { requirementVersion, canCompleteCentrally } = onboarding;
  if (typeof requirementVersion !== 'number' || !Number.isInteger(requirementVersion)) {
    throw new Error(`Malformed ${what}: requirementVersion`);
  }
  if (typeof canCompleteCentrally !== 'boolean') {
    throw new Error(`Malformed ${what}: canCompleteCentrally`);
  }
  const picture = user.picture === undefined ? undefined : stringOf(user, 'picture', what);
  return {
    user: {
      sub: stringOf(user, 'sub', what),
      issuer: stringOf(user, 'issuer', what),
      ...(picture === undefined ? {} : { picture }),
    },
    environment: {
      key: stringOf(environment, 'key', what),
      tier: stringOf(environment, 'tier', what),
    },
    onboarding: {
      status: stringOf(onboarding, 'status', what),
      requirementVersion,
      missingFields: stringsOf(onboarding, 'missingFields', what),
      canCompleteCentrally,
    },
    returnTo: stringOf(top, 'returnTo', what),
  };
}

/** A stored SessionSnapshot, checked field by field. */
export function readSessionSnapshot(value: unknown): SessionSnapshot {
  const what = 'session snapshot';
  const fields = fieldsOf(value, what);
  if (typeof fields.emailVerified !== 'boolean')
    throw new Error(`Malformed ${what}: emailVerified`);
  return {
    issuer: stringOf(fields, 'issuer', what),
    subject: stringOf(fields, 'subject', what),
    email: stringOf(fields, 'email', what),
    emailVerified: fields.emailVerified,
    environmentTier: stringOf(fields, 'environmentTier', what),
  };
}

/** A session's permissions as stored (a JSON array of strings). */
export function readPermissions(value: unknown): string[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new Error('Malformed session permissions');
  }
  return value as string[];
}
