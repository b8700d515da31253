import type { Redis } from 'ioredis';
import { ciphertextFromBytes, ciphertextToBytes } from '@gateway/crypto';
import type {
  AuthFlowStore,
  BindResult,
  BoundSessionRequest,
  BoundSessionResult,
  HandoffPresenter,
  HandoffRecord,
  IssueResult,
  OnboardingMode,
  RedeemAnswer,
  SessionRecord,
  SessionSnapshot,
  TransactionRecord,
} from './auth-flow-store.js';
import {
  checkBoundSession,
  checkHandoff,
  checkSession,
  checkTransaction,
  isUuid,
  readHandoffSnapshot,
  readPermissions,
} from './auth-flow-store.js';
import {
  allScripts,
  bindTransactionScript,
  consumeTransactionScript,
  createBoundSessionScript,
  createSessionScript,
  createTransactionScript,
  issueHandoffScript,
  redeemHandoffScript,
  revokeSessionScript,
  revokeUserSessionsScript,
  stripUserPermissionsScript,
} from './redis-scripts.js';
import type { ScriptDefinition } from './redis-scripts.js';

// Key layout (every key under the connection's keyPrefix; value layouts in redis-scripts.ts):
//   tx:<id>, txs:<stateHash>, ho:<codeHash>, hotx:<transactionId>, s:<tokenHash>, us:<userId>
const key = {
  transaction: (id: string) => `tx:${id}`,
  transactionByState: (stateHash: string) => `txs:${stateHash}`,
  handoff: (codeHash: string) => `ho:${codeHash}`,
  handoffIssued: (transactionId: string) => `hotx:${transactionId}`,
  session: (tokenHash: string) => `s:${tokenHash}`,
  userSessions: (userId: string) => `us:${userId}`,
};

type ScriptArg = string | number | Buffer;
type ScriptCall = (...args: ScriptArg[]) => Promise<unknown>;
type RunScript = (
  script: ScriptDefinition,
  keys: string[],
  args: ScriptArg[],
  replies?: 'text' | 'bytes',
) => Promise<unknown>;

/** What every operation uses: the connection, its key prefix and the defined scripts. */
type Connection = { redis: Redis; prefix: string; run: RunScript };

/**
 * The store on Redis (split mode). Every key is written with PEXPIREAT/PXAT, so Redis expires
 * everything itself; each check-and-set is one Lua script (redis-scripts.ts). The connection's
 * keyPrefix applies to every key.
 */
export function createRedisAuthFlowStore(redis: Redis): AuthFlowStore {
  const scripts = defineScripts(redis);
  const run: RunScript = (script, keys, args, replies = 'text') => {
    const name = replies === 'bytes' ? `${script.name}Buffer` : script.name;
    const call = scripts.get(name);
    if (!call) throw new Error(`Script ${name} is not defined`);
    return call(...keys, ...args);
  };
  const connection: Connection = { redis, prefix: redis.options.keyPrefix ?? '', run };
  return {
    kind: 'redis',
    async ping() {
      await redis.ping();
    },
    createTransaction: (record) => createTransaction(connection, record),
    consumeTransaction: (stateHash, now) => consumeTransaction(connection, stateHash, now),
    getTransaction: (id) => getTransaction(connection, id),
    bindTransaction: (id, binding) => bindTransaction(connection, id, binding),
    issueHandoff: (record) => issueHandoff(connection, record),
    redeemHandoff: (codeHash, now, presenter, deadline) =>
      redeemHandoff(connection, codeHash, now, presenter, deadline),
    createBoundSession: (request) => createBoundSession(connection, request),
    createSession: (record) => createSession(connection, record),
    getSession: (tokenHash, now) => getSession(connection, tokenHash, now),
    revokeSession: (tokenHash, now) => revokeSession(connection, tokenHash, now),
    revokeUserSessions: (userId, now) => revokeSessionsOf(connection, userId, now, 'revoke'),
    stripUserPermissions: (userId) => revokeSessionsOf(connection, userId, Date.now(), 'strip'),
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

async function consumeTransaction(
  { run, prefix }: Connection,
  stateHash: string,
  now: number,
): Promise<TransactionRecord | undefined> {
  const reply = await run(
    consumeTransactionScript,
    [key.transactionByState(stateHash)],
    [prefix, String(now)],
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

async function issueHandoff({ run }: Connection, record: HandoffRecord): Promise<IssueResult> {
  checkHandoff(record);
  const reply = await run(
    issueHandoffScript,
    [
      key.handoff(record.codeHash),
      key.handoffIssued(record.transactionId),
      key.transaction(record.transactionId),
    ],
    [encodeHandoff(record), String(record.expiresAt)],
  );
  return asIssueResult(reply);
}

/**
 * One script (redeemHandoffScript). The deadline sent is the caller's, or sooner this
 * connection's command time-out: past it ioredis has answered the caller with a time-out
 * error, so a script that runs later must not spend the code either.
 */
async function redeemHandoff(
  { run, prefix, redis }: Connection,
  codeHash: string,
  now: number,
  presenter: HandoffPresenter,
  deadline: number | undefined,
): Promise<RedeemAnswer> {
  const { commandTimeout } = redis.options;
  const bound = Math.min(
    deadline ?? Infinity,
    commandTimeout === undefined ? Infinity : Date.now() + commandTimeout,
  );
  const reply = await run(
    redeemHandoffScript,
    [key.handoff(codeHash)],
    [
      prefix,
      String(now),
      presenter.platformKey,
      presenter.callbackUrl,
      Number.isFinite(bound) ? String(bound) : '',
    ],
  );
  return decodeRedeemed(codeHash, reply);
}

async function createBoundSession(
  { run }: Connection,
  request: BoundSessionRequest,
): Promise<BoundSessionResult> {
  checkBoundSession(request);
  const { session, handoff } = request;
  const reply = await run(
    createBoundSessionScript,
    [
      key.transaction(request.transactionId),
      key.session(session.tokenHash),
      key.userSessions(session.userId),
      key.handoff(handoff?.codeHash ?? ''),
      key.handoffIssued(request.transactionId),
    ],
    [
      String(Date.now()),
      session.userId,
      session.id,
      String(request.keepUntil),
      encodeSession(session),
      String(session.expiresAt),
      session.tokenHash,
      handoff === undefined ? '' : encodeHandoff(handoff),
      handoff === undefined ? '' : String(handoff.expiresAt),
    ],
  );
  return asBoundSessionResult(reply);
}

async function createSession({ run }: Connection, record: SessionRecord): Promise<void> {
  checkSession(record);
  await run(
    createSessionScript,
    [key.session(record.tokenHash), key.userSessions(record.userId)],
    [encodeSession(record), String(record.expiresAt), record.tokenHash, String(Date.now())],
  );
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

async function revokeSession(
  { run, prefix }: Connection,
  tokenHash: string,
  now: number,
): Promise<SessionRecord | undefined> {
  const reply = await run(
    revokeSessionScript,
    [key.session(tokenHash)],
    [prefix, String(now), tokenHash],
    'bytes',
  );
  if (reply === null) return undefined;
  if (!Buffer.isBuffer(reply)) throw new Error('Malformed session in Redis');
  return decodeSession(tokenHash, reply);
}

/** Revokes the user's live sessions, or strips their permissions; answers how many. */
async function revokeSessionsOf(
  { run, prefix }: Connection,
  userId: string,
  now: number,
  action: 'revoke' | 'strip',
): Promise<number> {
  if (!isUuid(userId)) return 0;
  const script = action === 'revoke' ? revokeUserSessionsScript : stripUserPermissionsScript;
  const reply = await run(script, [key.userSessions(userId)], [prefix, String(now)]);
  return asCount(reply);
}

/** Defines the scripts on this connection (once per name) and returns their callers. */
function defineScripts(redis: Redis): Map<string, ScriptCall> {
  const calls = new Map<string, ScriptCall>();
  const commands = redis as unknown as Record<string, unknown>;
  for (const script of allScripts) {
    if (typeof commands[script.name] !== 'function') {
      redis.defineCommand(script.name, { numberOfKeys: script.keys, lua: script.lua });
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

// --- Handoffs: ho:<codeHash> = "<expiresAt><mark><JSON>" ------------------------------------

/**
 * The code hash is the key and expiresAt the header, so neither is repeated in the JSON. The
 * mark after the header is a newline while the handoff is pending; the redeem script turns it
 * into "r" in place once redeemed.
 */
function encodeHandoff(record: HandoffRecord): string {
  const data = {
    ...(record.sessionTokenHash === undefined ? {} : { sessionTokenHash: record.sessionTokenHash }),
    transactionId: record.transactionId,
    platformId: record.platformId,
    platformKey: record.platformKey,
    callbackUrl: record.callbackUrl,
    userId: record.userId,
    sessionId: record.sessionId,
    sessionTokenEncrypted: record.sessionTokenEncrypted,
    createdAt: record.createdAt,
    snapshot: record.snapshot,
  };
  return `${record.expiresAt}\n${JSON.stringify(data)}`;
}

/** The header of a handoff value: expiresAt, then the mark ("\n" pending, "r" redeemed). */
const HANDOFF_HEADER = /^(\d+)([\nr])/;

function decodeHandoff(codeHash: string, value: string): HandoffRecord {
  const header = HANDOFF_HEADER.exec(value);
  if (header === null) throw new Error('Malformed handoff in Redis');
  const [whole, expiresAt] = header;
  const parsed: unknown = JSON.parse(value.slice(whole.length));
  const data = readObject(parsed, 'handoff');
  const sessionTokenHash = data.optionalString('sessionTokenHash');
  return {
    codeHash,
    transactionId: data.string('transactionId'),
    platformId: data.string('platformId'),
    platformKey: data.string('platformKey'),
    callbackUrl: data.string('callbackUrl'),
    userId: data.string('userId'),
    sessionId: data.string('sessionId'),
    sessionTokenEncrypted: data.string('sessionTokenEncrypted'),
    ...(sessionTokenHash === undefined ? {} : { sessionTokenHash }),
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
  const text = asString(value, 'handoff');
  const handoff = decodeHandoff(codeHash, text);
  if (expiresAt === undefined) {
    // A handoff naming its session always comes back with it (or as 0).
    if (handoff.sessionTokenHash !== undefined) throw new Error('Redeem answered no session');
    return handoff;
  }
  // The value as the script found it: marked redeemed when this is not the first redeem.
  const repeated = HANDOFF_HEADER.exec(text)?.[2] === 'r';
  return {
    ...handoff,
    session: {
      expiresAt: asEpoch(asString(expiresAt, 'session expiresAt'), 'session expiresAt'),
      permissions: readPermissions(JSON.parse(asString(permissions, 'session permissions'))),
    },
    ...(repeated ? { repeated: true as const } : {}),
  };
}

// --- Sessions: s:<tokenHash> = "<expiresAt>\n<userId>\n<permissions JSON>\n<JSON rest>[\n<bytes>]"
// Compact on purpose (at most 1 KiB of Redis memory per live session): the token hash is the
// key, not repeated in the value; the rest is a positional JSON array
// [id, environmentKey, platformKey, idToken, createdAt, issuer, subject, email, emailVerified,
// environmentTier] (the last five are the introspection snapshot). idToken is null (none) or 0
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
  if (!Array.isArray(rest) || rest.length !== 10) {
    throw new Error('Malformed session in Redis: fields');
  }
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
    snapshot: decodeSessionSnapshot(rest.slice(5)),
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
