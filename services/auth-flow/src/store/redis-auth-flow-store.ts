import type { RedisClient } from '@gateway/db';
import { Cluster } from 'ioredis';
import { ciphertextFromBytes, ciphertextToBytes, hashToken } from '@gateway/crypto';
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
  SessionSnapshot,
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
  newestFirst,
  readHandoffSnapshot,
  readPermissions,
} from './auth-flow-store.js';
import {
  allScripts,
  bindTransactionScript,
  claimHandoffScript,
  consumeTransactionScript,
  createBoundSessionScript,
  createSessionScript,
  createTransactionScript,
  indexSessionScript,
  redeemHandoffScript,
  revokeSessionScript,
  stripSessionPermissionsScript,
} from './redis-scripts.js';
import type { ScriptDefinition } from './redis-scripts.js';
import { slotTagOf, splitCredentialHash } from './slot-tags.js';

// Key layout (every key under the connection's keyPrefix; value layouts in redis-scripts.ts):
//   tx:{<tag>}<id>, txs:<stateHash>, ho:<codeHash>, hotx:{<tag>}<transactionId>, s:<tokenHash>,
//   us:<userId>, ids:<hash>, once:<hash>, where the tag of a transaction is its id's (slot-tags.ts) and a tagged hash
//   "<tag>.<hash>" is written {<tag>}<hash>: a transaction, its state and the session of its
//   callback share one Cluster hash slot, and a handoff shares its session's. A bare hash (a
//   credential from before tags) is the key as it always was, so sessions signed in before
//   tags are still found. The identity-session index ids:<hash> (hash of the environment key
//   and the sid) and the acceptOnce marker once:<hash> are single keys in slots of their own.
const key = {
  transaction: (id: string) => `tx:{${slotTagOf(id)}}${id}`,
  transactionByState: (stateHash: string) => `txs:${slotted(stateHash)}`,
  handoff: (codeHash: string) => `ho:${slotted(codeHash)}`,
  handoffIssued: (transactionId: string) => `hotx:{${slotTagOf(transactionId)}}${transactionId}`,
  session: (tokenHash: string) => `s:${slotted(tokenHash)}`,
  userSessions: (userId: string) => `us:${userId}`,
  identitySessions: (environmentKey: string, identitySessionId: string) =>
    `ids:${hashToken(`${environmentKey}\n${identitySessionId}`)}`,
  acceptedOnce: (onceKey: string) => `once:${hashToken(onceKey)}`,
};

function slotted(credentialHash: string): string {
  const { tag, hash } = splitCredentialHash(credentialHash);
  return tag === undefined ? hash : `{${tag}}${hash}`;
}

type ScriptArg = string | number | Buffer;
type ScriptCall = (...args: ScriptArg[]) => Promise<unknown>;
type RunScript = (
  script: ScriptDefinition,
  keys: string[],
  args: ScriptArg[],
  replies?: 'text' | 'bytes',
) => Promise<unknown>;

/** What every operation uses: the connection and the defined scripts. */
type Connection = { redis: RedisClient; run: RunScript };

/**
 * The store on Redis (split mode). Every key is written with PEXPIREAT/PXAT, so Redis expires
 * everything itself; each check-and-set is one Lua script (redis-scripts.ts). The connection's
 * keyPrefix applies to every key. One server, a Sentinel master or a Cluster: every script's
 * keys share one hash slot.
 */
export function createRedisAuthFlowStore(redis: RedisClient): AuthFlowStore {
  const scripts = defineScripts(redis);
  const run: RunScript = (script, keys, args, replies = 'text') => {
    const name = replies === 'bytes' ? `${script.name}Buffer` : script.name;
    const call = scripts.get(name);
    if (!call) throw new Error(`Script ${name} is not defined`);
    if (script.keys === 'variable') return call(keys.length, ...keys, ...args);
    return call(...keys, ...args);
  };
  const connection: Connection = { redis, run };
  return {
    kind: 'redis',
    async ping() {
      await redis.ping();
    },
    createTransaction: (record) => createTransaction(connection, record),
    consumeTransaction: (state, now) => consumeTransaction(connection, state, now),
    getTransaction: (id) => getTransaction(connection, id),
    bindTransaction: (id, binding) => bindTransaction(connection, id, binding),
    issueHandoff: (record) => issueHandoff(connection, record),
    redeemHandoff: (handoff, now, presenter, deadline) =>
      redeemHandoff(connection, handoff, now, presenter, deadline),
    createBoundSession: (request) => createBoundSession(connection, request),
    createSession: (record) => createSession(connection, record),
    getSession: (tokenHash, now) => getSession(connection, tokenHash, now),
    revokeSession: (tokenHash, now) => revokeSession(connection, tokenHash, now),
    listUserSessions: (userId, now) => listUserSessions(connection, userId, now),
    revokeUserSession: (userId, sessionId, now) =>
      revokeUserSession(connection, userId, sessionId, now),
    revokeUserSessions: (userId, now, exceptSessionId) =>
      revokeSessionsOf(connection, userId, now, { revoke: true, exceptSessionId }),
    stripUserPermissions: (userId) =>
      revokeSessionsOf(connection, userId, Date.now(), { revoke: false }),
    revokeIdentitySessions: (environmentKey, selector, now) =>
      revokeIdentitySessions(connection, environmentKey, selector, now),
    acceptOnce: (onceKey, until, now) => acceptOnce(connection, onceKey, until, now),
  };
}

// --- Transactions ------------------------------------------------------------------------------

async function createTransaction({ run }: Connection, record: TransactionRecord): Promise<void> {
  checkTransaction(record);
  const optional: string[] = [];
  if (record.consumedAt !== null) optional.push('c', String(record.consumedAt));
  if (record.userId !== null) optional.push('u', record.userId);
  if (record.sessionId !== null) optional.push('s', record.sessionId);
  const created = await run(
    createTransactionScript,
    [key.transaction(record.id), key.transactionByState(record.stateHash)],
    [record.id, encodeTransactionData(record), String(record.expiresAt), ...optional],
  );
  if (created !== 1) {
    throw new Error('A transaction with this id or state hash already exists');
  }
}

/**
 * One script call: the state carries its transaction's id (slot-tags.ts), so both keys are
 * named without a read, and the script consumes only when the state hash names that id. A
 * state whose id is in another slot than its hash (a made-up one) names nothing.
 */
async function consumeTransaction(
  { run }: Connection,
  state: TransactionKey,
  now: number,
): Promise<TransactionRecord | undefined> {
  const id = state.transactionId;
  if (!isUuid(id) || splitCredentialHash(state.stateHash).tag !== slotTagOf(id)) {
    return undefined;
  }
  const reply = await run(
    consumeTransactionScript,
    [key.transactionByState(state.stateHash), key.transaction(id)],
    [id, String(now)],
  );
  if (reply === null) return undefined;
  return decodeTransaction(pairsToRecord(reply));
}

async function getTransaction(
  { redis }: Connection,
  id: string,
): Promise<TransactionRecord | undefined> {
  if (!isUuid(id)) return undefined;
  const fields = await redis.hgetall(key.transaction(id));
  if (fields.d === undefined) return undefined;
  const record = decodeTransaction(fields);
  return Date.now() < record.expiresAt ? record : undefined;
}

async function bindTransaction(
  { run }: Connection,
  id: string,
  binding: { userId: string; sessionId: string; keepUntil: number },
): Promise<BindResult> {
  if (!isUuid(id)) return 'not_found';
  const reply = await run(
    bindTransactionScript,
    [key.transaction(id)],
    [String(Date.now()), binding.userId, binding.sessionId, String(binding.keepUntil)],
  );
  return asBindResult(reply);
}

// --- Handoffs and sessions ---------------------------------------------------------------------

/**
 * Resume's issue (spec 4.3): claims the transaction's one handoff (the hotx marker, in the
 * transaction's slot), then stores the handoff in its session's slot, which is another when
 * the resumed login hands off an earlier login's session. Stopped between the two, the
 * login's handoff is spent and its user signs in again; nothing is handed out twice.
 */
async function issueHandoff(
  { run, redis }: Connection,
  record: HandoffRecord,
): Promise<IssueResult> {
  checkHandoff(record);
  const claimed = await run(
    claimHandoffScript,
    [key.handoffIssued(record.transactionId), key.transaction(record.transactionId)],
    [String(record.expiresAt)],
  );
  if (asIssueResult(claimed) === 'conflict') return 'conflict';
  const stored = await redis.set(
    key.handoff(record.codeHash),
    encodeHandoff(record),
    'PXAT',
    record.expiresAt,
    'NX',
  );
  if (stored === null) throw new Error('A handoff with this code hash already exists');
  return 'issued';
}

/**
 * Redeems in one script call (redeemHandoffScript): the code carries its session's token hash
 * (slot-tags.ts), so the session's key is named without a read, in the code's slot. A code
 * whose session hash is in another slot (a made-up code on a Cluster) names nothing. The
 * deadline sent is the caller's, or sooner this connection's command time-out: past it ioredis
 * has answered the caller with a time-out error, so a script that runs later must not spend
 * the code either.
 */
async function redeemHandoff(
  { run, redis }: Connection,
  handoff: HandoffKey,
  now: number,
  presenter: HandoffPresenter,
  deadline: number | undefined,
): Promise<RedeemAnswer> {
  const { codeHash, sessionTokenHash } = handoff;
  const codeKey = key.handoff(codeHash);
  if (
    redis.isCluster &&
    sessionTokenHash !== undefined &&
    splitCredentialHash(sessionTokenHash).tag !== splitCredentialHash(codeHash).tag
  ) {
    return undefined;
  }
  const commandTimeout = commandTimeoutOf(redis);
  const bound = Math.min(
    deadline ?? Infinity,
    commandTimeout === undefined ? Infinity : Date.now() + commandTimeout,
  );
  const reply = await run(
    redeemHandoffScript,
    [codeKey, sessionTokenHash === undefined ? codeKey : key.session(sessionTokenHash)],
    [
      String(now),
      presenter.platformKey,
      presenter.callbackUrl,
      Number.isFinite(bound) ? String(bound) : '',
      sessionTokenHash ?? '',
    ],
  );
  return decodeRedeemed(codeHash, reply);
}

function commandTimeoutOf(redis: RedisClient): number | undefined {
  return redis instanceof Cluster
    ? redis.options.redisOptions?.commandTimeout
    : redis.options.commandTimeout;
}

/**
 * Adds the session to its user's index (another slot), then binds, stores the session and
 * issues the handoff in one script (createBoundSessionScript), both through indexFirst. When
 * the script refuses or fails, the index names a session that does not exist until the
 * member's score (the session's expiry): harmless, revoking and stripping skip it.
 */
async function createBoundSession(
  connection: Connection,
  request: BoundSessionRequest,
): Promise<BoundSessionResult> {
  checkBoundSession(request);
  const { session, handoff } = request;
  const txKey = key.transaction(request.transactionId);
  const reply = await indexFirst(connection, session, () =>
    connection.run(
      createBoundSessionScript,
      [
        txKey,
        key.session(session.tokenHash),
        handoff === undefined ? txKey : key.handoff(handoff.codeHash),
        key.handoffIssued(request.transactionId),
      ],
      [
        String(Date.now()),
        session.userId,
        session.id,
        String(request.keepUntil),
        encodeSession(session),
        String(session.expiresAt),
        handoff === undefined ? '' : encodeHandoff(handoff),
        handoff === undefined ? '' : String(handoff.expiresAt),
      ],
    ),
  );
  return asBoundSessionResult(reply);
}

/** Index first, then the session (see indexFirst). */
async function createSession(connection: Connection, record: SessionRecord): Promise<void> {
  checkSession(record);
  await indexFirst(connection, record, () =>
    connection.run(
      createSessionScript,
      [key.session(record.tokenHash)],
      [encodeSession(record), String(record.expiresAt)],
    ),
  );
}

type IndexedSession = Pick<
  SessionRecord,
  'userId' | 'tokenHash' | 'expiresAt' | 'environmentKey' | 'identitySessionId'
>;

/**
 * Adds the session to its indexes, then runs `write`, which may store it: a member before its
 * session, so no session escapes revokeUserSessions or revokeIdentitySessions. On one
 * connection (one server, Sentinel) both commands are sent at once and Redis runs them in the
 * order sent: one round trip. A Cluster may serve an index from another node, where nothing
 * orders them, so there `write` waits for the indexes. Should an index fail while the session
 * was stored, the session is deleted again before the failure is passed on.
 */
async function indexFirst(
  connection: Connection,
  session: IndexedSession,
  write: () => Promise<unknown>,
): Promise<unknown> {
  const indexed = addToIndexes(connection, session);
  if (connection.redis.isCluster) await indexed;
  const [index, written] = await Promise.allSettled([indexed, write()]);
  if (index.status === 'rejected') {
    if (written.status === 'fulfilled') {
      await connection.run(revokeSessionScript, [key.session(session.tokenHash)], []);
    }
    throw index.reason;
  }
  if (written.status === 'rejected') throw written.reason;
  return written.value;
}

/**
 * Adds a session to its user's index us:<userId> and, when it has an identity session id, to
 * that identity session's index ids:<hash>, before the session exists (indexSessionScript).
 * One script call for both, except on a Cluster, where each index is in its own slot and gets
 * its own call, both sent at once: a sign-in with a `sid` waits no longer there either.
 */
async function addToIndexes({ run, redis }: Connection, session: IndexedSession): Promise<void> {
  const indexes = [key.userSessions(session.userId)];
  if (session.identitySessionId !== null) {
    indexes.push(key.identitySessions(session.environmentKey, session.identitySessionId));
  }
  const args = [String(Date.now()), String(session.expiresAt), session.tokenHash];
  if (!redis.isCluster || indexes.length === 1) {
    await run(indexSessionScript, indexes, args);
    return;
  }
  await Promise.all(indexes.map((index) => run(indexSessionScript, [index], args)));
}

async function getSession(
  { redis }: Connection,
  tokenHash: string,
  now: number,
): Promise<SessionRecord | undefined> {
  const value = await redis.getBuffer(key.session(tokenHash));
  if (value === null) return undefined;
  const record = decodeSession(tokenHash, value);
  return now < record.expiresAt ? record : undefined;
}

/**
 * The session's key first (one script), then its index members, which are safe to leave.
 * Of concurrent calls only the one whose script deleted the key gets the record.
 */
async function revokeSession(
  { run, redis }: Connection,
  tokenHash: string,
  now: number,
): Promise<SessionRecord | undefined> {
  const reply = await run(revokeSessionScript, [key.session(tokenHash)], [], 'bytes');
  if (reply === null) return undefined;
  if (!Buffer.isBuffer(reply)) throw new Error('Malformed session in Redis');
  const record = decodeSession(tokenHash, reply);
  const unindexed = [redis.zrem(key.userSessions(record.userId), tokenHash)];
  if (record.identitySessionId !== null) {
    const index = key.identitySessions(record.environmentKey, record.identitySessionId);
    unindexed.push(redis.zrem(index, tokenHash));
  }
  await Promise.all(unindexed);
  return now < record.expiresAt ? record : undefined;
}

/**
 * The sessions an index names that exist and are live by now (each read on its own: they are
 * in other slots than the index and than each other).
 */
async function liveIndexed(
  { redis }: Connection,
  index: string,
  now: number,
): Promise<SessionRecord[]> {
  const hashes = await redis.zrangebyscore(index, `(${now}`, '+inf');
  const values = await Promise.all(hashes.map((hash) => redis.getBuffer(key.session(hash))));
  const sessions: SessionRecord[] = [];
  values.forEach((value, position) => {
    const hash = hashes[position];
    if (value === null || hash === undefined) return;
    const session = decodeSession(hash, value);
    if (now < session.expiresAt) sessions.push(session);
  });
  return sessions;
}

/** The user's index, its sessions read one by one, newest first. */
async function listUserSessions(
  connection: Connection,
  userId: string,
  now: number,
): Promise<SessionRecord[]> {
  if (!isUuid(userId)) return [];
  const sessions = await liveIndexed(connection, key.userSessions(userId), now);
  return sessions.filter((session) => session.userId === userId).sort(newestFirst);
}

/**
 * Finds the session in the user's index by its id, then revokes it by its key (revokeSession):
 * a session of another user is never in this user's index.
 */
async function revokeUserSession(
  connection: Connection,
  userId: string,
  sessionId: string,
  now: number,
): Promise<SessionRecord | undefined> {
  if (!isUuid(sessionId)) return undefined;
  const sessions = await listUserSessions(connection, userId, now);
  const target = sessions.find((session) => session.id === sessionId);
  return target && revokeSession(connection, target.tokenHash, now);
}

/**
 * The identity session's index (or the user's, for a user alone), its live sessions of this
 * environment (and user) revoked one by one (revokeSession).
 */
async function revokeIdentitySessions(
  connection: Connection,
  environmentKey: string,
  selector: IdentitySessionSelector,
  now: number,
): Promise<SessionRecord[]> {
  checkIdentitySelector(selector);
  const { identitySessionId, userId } = selector;
  if (userId !== undefined && !isUuid(userId)) return [];
  const index =
    identitySessionId === undefined
      ? key.userSessions(userId ?? '')
      : key.identitySessions(environmentKey, identitySessionId);
  const matching = (await liveIndexed(connection, index, now)).filter(
    (session) =>
      session.environmentKey === environmentKey &&
      (identitySessionId === undefined || session.identitySessionId === identitySessionId) &&
      (userId === undefined || session.userId === userId),
  );
  const revoked = await Promise.all(
    matching.map((session) => revokeSession(connection, session.tokenHash, now)),
  );
  return revoked.filter((session): session is SessionRecord => session !== undefined);
}

/** One SET NX with the key's end as its expiry: Redis forgets the key then. */
async function acceptOnce(
  { redis }: Connection,
  onceKey: string,
  until: number,
  now: number,
): Promise<boolean> {
  if (now >= until) return false;
  const stored = await redis.set(key.acceptedOnce(onceKey), '1', 'PXAT', until, 'NX');
  return stored === 'OK';
}

/**
 * Revokes the user's live sessions (but the one with id `exceptSessionId`), or strips their
 * permissions; answers how many. The index is in another slot than the sessions, so each
 * session is its own command: a revoke deletes every indexed session live by now, then removes
 * from the index the members it deleted (a member whose session does not exist yet stays: its
 * login may be writing it). Stopped halfway, a revoke leaves the rest indexed and live, and a
 * repeated revoke finishes it. Members of identity-session indexes stay until their score: a
 * lookup there skips sessions that no longer exist.
 */
async function revokeSessionsOf(
  connection: Connection,
  userId: string,
  now: number,
  action: { revoke: false } | { revoke: true; exceptSessionId: string | undefined },
): Promise<number> {
  const { run, redis } = connection;
  if (!isUuid(userId)) return 0;
  const index = key.userSessions(userId);
  await redis.zremrangebyscore(index, '-inf', now);
  let members = await redis.zrange(index, '0', '-1');
  if (!action.revoke) {
    const replies = await Promise.all(
      members.map((hash) => run(stripSessionPermissionsScript, [key.session(hash)], [String(now)])),
    );
    return replies.filter((reply) => asCount(reply) === 1).length;
  }
  const { exceptSessionId } = action;
  if (exceptSessionId !== undefined) {
    const kept = (await liveIndexed(connection, index, now))
      .filter((session) => session.id === exceptSessionId)
      .map((session) => session.tokenHash);
    members = members.filter((hash) => !kept.includes(hash));
  }
  const deleted = await Promise.all(members.map((hash) => redis.del(key.session(hash))));
  const gone = members.filter((_, position) => deleted[position] === 1);
  if (gone.length > 0) await redis.zrem(index, ...gone);
  return gone.length;
}

/** Defines the scripts on this connection (once per name) and returns their callers. */
function defineScripts(redis: RedisClient): Map<string, ScriptCall> {
  const calls = new Map<string, ScriptCall>();
  const commands = redis as unknown as Record<string, unknown>;
  for (const script of allScripts) {
    if (typeof commands[script.name] !== 'function') {
      redis.defineCommand(script.name, {
        lua: script.lua,
        // Without a number, each call passes the count first (run does).
        ...(script.keys === 'variable' ? {} : { numberOfKeys: script.keys }),
      });
    }
    // ioredis also defines `<name>Buffer`, whose bulk replies stay bytes (session values).
    for (const name of [script.name, `${script.name}Buffer`]) {
      const command = commands[name] as ScriptCall;
      calls.set(name, (...args) => command.apply(redis, args));
    }
  }
  return calls;
}

// --- Transactions: hash tx:<id> with d (fixed fields as JSON), e, c, u, s -------------------

type TransactionData = Omit<TransactionRecord, 'expiresAt' | 'consumedAt' | 'userId' | 'sessionId'>;

function encodeTransactionData(record: TransactionRecord): string {
  const data: TransactionData = {
    id: record.id,
    stateHash: record.stateHash,
    nonceHash: record.nonceHash,
    pkceVerifierEncrypted: record.pkceVerifierEncrypted,
    platformId: record.platformId,
    platformKey: record.platformKey,
    environmentKey: record.environmentKey,
    onboardingMode: record.onboardingMode,
    centralOnboardingEnabled: record.centralOnboardingEnabled,
    redirectPairId: record.redirectPairId,
    callbackUrl: record.callbackUrl,
    returnTo: record.returnTo,
    createdAt: record.createdAt,
  };
  return JSON.stringify(data);
}

function decodeTransaction(fields: Record<string, string>): TransactionRecord {
  const data = readObject(JSON.parse(asString(fields.d, 'transaction data')), 'transaction');
  return {
    id: data.string('id'),
    stateHash: data.string('stateHash'),
    nonceHash: data.string('nonceHash'),
    pkceVerifierEncrypted: data.string('pkceVerifierEncrypted'),
    platformId: data.string('platformId'),
    platformKey: data.string('platformKey'),
    environmentKey: data.string('environmentKey'),
    onboardingMode: asOnboardingMode(data.string('onboardingMode')),
    centralOnboardingEnabled: data.boolean('centralOnboardingEnabled'),
    redirectPairId: data.string('redirectPairId'),
    callbackUrl: data.string('callbackUrl'),
    returnTo: data.string('returnTo'),
    createdAt: data.number('createdAt'),
    expiresAt: asEpoch(fields.e, 'transaction expiresAt'),
    consumedAt: fields.c === undefined ? null : asEpoch(fields.c, 'transaction consumedAt'),
    userId: fields.u ?? null,
    sessionId: fields.s ?? null,
  };
}

/** A Lua HGETALL reply, [field, value, field, value, ...], as an object. */
function pairsToRecord(reply: unknown): Record<string, string> {
  if (!Array.isArray(reply)) throw new Error('Unexpected reply from Redis: not a field list');
  const fields: Record<string, string> = {};
  for (let index = 0; index + 1 < reply.length; index += 2) {
    fields[asString(reply[index], 'field')] = asString(reply[index + 1], 'value');
  }
  return fields;
}

// --- Handoffs: ho:<codeHash> = "<expiresAt>\n<platformKey>\n<callbackUrl>\n<sessionTokenHash>\n<JSON>"
// The code hash is the key, so it is not repeated. The header lines are what the redeem script
// compares (no JSON decoding in Lua); a platform key is a name and a callback a serialised URL,
// neither holds a newline.

function encodeHandoff(record: HandoffRecord): string {
  const header = [
    String(record.expiresAt),
    record.platformKey,
    record.callbackUrl,
    record.sessionTokenHash ?? '',
  ];
  if (header.some((line) => line.includes('\n'))) {
    throw new TypeError('HandoffRecord fields must not contain a newline');
  }
  const data = {
    transactionId: record.transactionId,
    platformId: record.platformId,
    userId: record.userId,
    sessionId: record.sessionId,
    sessionTokenEncrypted: record.sessionTokenEncrypted,
    createdAt: record.createdAt,
    snapshot: record.snapshot,
  };
  return `${header.join('\n')}\n${JSON.stringify(data)}`;
}

function decodeHandoff(codeHash: string, value: string): HandoffRecord {
  const [expiresAt, platformKey, callbackUrl, sessionTokenHash, json] = splitHeader(
    value,
    4,
    'handoff',
  );
  const parsed: unknown = JSON.parse(json ?? '');
  const data = readObject(parsed, 'handoff');
  return {
    codeHash,
    transactionId: data.string('transactionId'),
    platformId: data.string('platformId'),
    platformKey: asString(platformKey, 'handoff platformKey'),
    callbackUrl: asString(callbackUrl, 'handoff callbackUrl'),
    userId: data.string('userId'),
    sessionId: data.string('sessionId'),
    sessionTokenEncrypted: data.string('sessionTokenEncrypted'),
    ...(sessionTokenHash === undefined || sessionTokenHash === '' ? {} : { sessionTokenHash }),
    snapshot: readHandoffSnapshot((parsed as Record<string, unknown>).snapshot),
    createdAt: data.number('createdAt'),
    expiresAt: asEpoch(expiresAt, 'handoff expiresAt'),
  };
}

/** The redeem script's answer (see redeemHandoffScript). */
function decodeRedeemed(codeHash: string, reply: unknown): RedeemAnswer {
  if (reply === null || reply === 0) return undefined;
  if (reply === 'late') return 'too_late';
  if (!Array.isArray(reply)) throw new Error('Unexpected reply from Redis to redeem');
  const [value, expiresAt, permissions] = reply as unknown[];
  const handoff = decodeHandoff(codeHash, asString(value, 'handoff'));
  if (expiresAt === undefined) {
    // A handoff naming its session always comes back with it (or as 0).
    if (handoff.sessionTokenHash !== undefined) throw new Error('Redeem answered no session');
    return handoff;
  }
  return {
    ...handoff,
    session: {
      expiresAt: asEpoch(asString(expiresAt, 'session expiresAt'), 'session expiresAt'),
      permissions: readPermissions(JSON.parse(asString(permissions, 'session permissions'))),
    },
  };
}

// --- Sessions: s:<tokenHash> = "<expiresAt>\n<userId>\n<permissions JSON>\n<JSON rest>[\n<bytes>]"
// Compact on purpose (at most 1 KiB of Redis memory per live session): the token hash is the
// key, not repeated in the value; the rest is a positional JSON array
// [id, environmentKey, platformKey, idToken, createdAt, issuer, subject, email, emailVerified,
// environmentTier, identitySessionId] (issuer to environmentTier are the introspection
// snapshot; identitySessionId is there only when the session has one, so a session without
// one keeps the ten fields every version reads). idToken is null (none) or 0
// (the sealed ID token follows the JSON line as bytes: ciphertextToBytes, a quarter smaller
// than its text). The first three lines are what
// the Lua scripts read (expiry, the user's index, permissions to strip); JSON never contains a
// raw newline, so the layout is unambiguous, and Lua's strings keep the bytes as they are.

const ID_TOKEN_IN_BYTES = 0;

function encodeSession(record: SessionRecord): Buffer | string {
  const idTokenBytes =
    record.idTokenEncrypted === null ? undefined : ciphertextToBytes(record.idTokenEncrypted);
  const { snapshot } = record;
  const rest: unknown[] = [
    record.id,
    record.environmentKey,
    record.platformKey,
    idTokenBytes === undefined ? null : ID_TOKEN_IN_BYTES,
    record.createdAt,
    snapshot.issuer,
    snapshot.subject,
    snapshot.email,
    snapshot.emailVerified,
    snapshot.environmentTier,
  ];
  if (record.identitySessionId !== null) rest.push(record.identitySessionId);
  const text = [
    String(record.expiresAt),
    record.userId,
    JSON.stringify(record.permissions),
    JSON.stringify(rest),
  ].join('\n');
  if (idTokenBytes === undefined) return text;
  return Buffer.concat([Buffer.from(`${text}\n`, 'utf8'), idTokenBytes]);
}

const NEWLINE = 0x0a;

function decodeSession(tokenHash: string, value: Buffer): SessionRecord {
  // The fourth newline, when there is one, ends the text and starts the bytes.
  let end = -1;
  for (let line = 0; line < 4; line += 1) {
    end = value.indexOf(NEWLINE, end + 1);
    if (end < 0) break;
  }
  const text = value.toString('utf8', 0, end < 0 ? value.length : end);
  const [expiresAt, userId, permissionsJson, restJson] = splitHeader(text, 3, 'session');
  const permissions = readPermissions(JSON.parse(permissionsJson));
  const rest: unknown = JSON.parse(restJson);
  if (!Array.isArray(rest) || (rest.length !== 10 && rest.length !== 11)) {
    throw new Error('Malformed session in Redis: fields');
  }
  const identitySessionId: unknown = rest[10] ?? null;
  const [id, environmentKey, platformKey, idToken, createdAt] = rest as unknown[];
  if (idToken !== null && (idToken !== ID_TOKEN_IN_BYTES || end < 0)) {
    throw new Error('Malformed session idToken in Redis');
  }
  const idTokenEncrypted = idToken === null ? null : ciphertextFromBytes(value.subarray(end + 1));
  return {
    id: asString(id, 'session id'),
    tokenHash,
    userId,
    environmentKey: asString(environmentKey, 'session environmentKey'),
    platformKey: platformKey === null ? null : asString(platformKey, 'session platformKey'),
    permissions,
    idTokenEncrypted,
    identitySessionId:
      identitySessionId === null ? null : asString(identitySessionId, 'session identitySessionId'),
    snapshot: decodeSessionSnapshot(rest.slice(5, 10)),
    createdAt: asNumber(createdAt, 'session createdAt'),
    expiresAt: asEpoch(expiresAt, 'session expiresAt'),
  };
}

function decodeSessionSnapshot(fields: unknown[]): SessionSnapshot {
  const [issuer, subject, email, emailVerified, environmentTier] = fields;
  if (typeof emailVerified !== 'boolean') {
    throw new Error('Malformed session emailVerified in Redis');
  }
  return {
    issuer: asString(issuer, 'session issuer'),
    subject: asString(subject, 'session subject'),
    email: asString(email, 'session email'),
    emailVerified,
    environmentTier: asString(environmentTier, 'session environmentTier'),
  };
}

// --- Small readers ---------------------------------------------------------------------------

/** Splits off `lines` header lines; the last element is the remainder. */
function splitHeader(value: string, lines: number, what: string): string[] {
  const parts: string[] = [];
  let start = 0;
  for (let line = 0; line < lines; line += 1) {
    const end = value.indexOf('\n', start);
    if (end < 0) throw new Error(`Malformed ${what} in Redis`);
    parts.push(value.slice(start, end));
    start = end + 1;
  }
  parts.push(value.slice(start));
  return parts;
}

type ObjectReader = {
  string(name: string): string;
  number(name: string): number;
  optionalString(name: string): string | undefined;
  boolean(name: string): boolean;
};

function readObject(value: unknown, what: string): ObjectReader {
  if (typeof value !== 'object' || value === null) throw new Error(`Malformed ${what} in Redis`);
  const fields = value as Record<string, unknown>;
  return {
    string: (name) => asString(fields[name], `${what} ${name}`),
    number: (name) => asNumber(fields[name], `${what} ${name}`),
    optionalString: (name) =>
      fields[name] === undefined ? undefined : asString(fields[name], `${what} ${name}`),
    boolean: (name) => {
      const field = fields[name];
      if (typeof field !== 'boolean') throw new Error(`Malformed ${what} ${name} in Redis`);
      return field;
    },
  };
}

function asString(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new Error(`Malformed ${what} in Redis`);
  return value;
}

function asNumber(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new Error(`Malformed ${what} in Redis`);
  }
  return value;
}

function asEpoch(value: string | undefined, what: string): number {
  const number = Number(value);
  if (value === undefined || !/^\d+$/.test(value) || !Number.isSafeInteger(number)) {
    throw new Error(`Malformed ${what} in Redis`);
  }
  return number;
}

function asCount(reply: unknown): number {
  if (typeof reply !== 'number') throw new Error('Unexpected reply from Redis: not a count');
  return reply;
}

function asBoundSessionResult(reply: unknown): BoundSessionResult {
  if (reply === 'conflict') return reply;
  return asBindResult(reply);
}

function asOnboardingMode(value: string): OnboardingMode {
  if (value === 'none' || value === 'platform' || value === 'central') return value;
  throw new Error('Malformed transaction onboardingMode in Redis');
}

function asBindResult(reply: unknown): BindResult {
  if (reply === 'bound' || reply === 'already_bound' || reply === 'not_found') return reply;
  throw new Error('Unexpected reply from Redis to bind');
}

function asIssueResult(reply: unknown): IssueResult {
  if (reply === 'issued' || reply === 'conflict') return reply;
  throw new Error('Unexpected reply from Redis to issue');
}
