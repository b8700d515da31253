// The Lua scripts of the Redis store: every check-and-set and consume-once step runs as one
// script, so Redis executes it atomically. ioredis `defineCommand` sends EVALSHA and falls back
// to EVAL on NOSCRIPT (after a restart or SCRIPT FLUSH).
//
// KEYS get the connection's key prefix from ioredis. Every key a script touches is one of its
// KEYS, and all of a script's keys share one hash slot ({<tag>}, slot-tags.ts), so the scripts
// run unchanged on one server, on a Sentinel master and on a Redis Cluster. What a script could
// only learn inside (the transaction behind a state, the session a handoff names) the caller
// reads first and the script checks again, so a read that went stale changes nothing. The
// per-user index us:<userId> and the per-identity-session index ids:<hash> live in their own
// slots and are written by separate commands: a member is added before its session is written
// and removed only after its session is gone, so an index may name a session that does not
// exist (until the member's score, its expiry), never miss one that does.
//
// Times are epoch milliseconds passed in from the caller's clock (`now`), so expiry is exact
// even before Redis evicts the key (every key also carries PEXPIREAT/PXAT). 13-digit numbers
// are exact in Lua's doubles; values are written back as the strings they came in. The one
// reading of Redis's own clock (TIME) is the redeem's deadline check, which asks whether the
// caller is still waiting at the moment the script runs.
//
// Value layouts (see redis-auth-flow-store.ts for the TypeScript side; <tag> is written
// {<tag>}: the transaction id's, or the one a credential hash carries, none for a bare hash):
//   tx:<tag><id>       hash  d = JSON of the fixed fields, e = expiresAt, c = consumedAt,
//                            u = userId, s = sessionId (c, u, s absent until set)
//   txs:<stateHash>    string transaction id (deleted when the transaction is consumed)
//   ho:<codeHash>      string "<expiresAt>\n<platformKey>\n<callbackUrl>\n<sessionTokenHash>\n<JSON>"
//                            (sessionTokenHash empty for none; deleted by its redeem)
//   hotx:<tag><txId>   string "1": a handoff was issued for this transaction
//   s:<tokenHash>      string "<expiresAt>\n<userId>\n<permissions JSON>\n<JSON rest>[\n<bytes>]"
//   us:<userId>        sorted set: member = session token hash, score = its expiresAt
//   ids:<hash>         sorted set as us:, of the sessions signed in with one identity session:
//                            hash = SHA-256 base64url of "<environmentKey>\n<sid>"
//   once:<hash>        string "1" until the acceptOnce key's end: hash = SHA-256 of the key

/** Splits a session value into expiresAt, userId, permissions JSON and the two cut points. */
const PARSE_SESSION = `
local function parse_session(v)
  local a = string.find(v, '\\n', 1, true)
  local b = string.find(v, '\\n', a + 1, true)
  local c = string.find(v, '\\n', b + 1, true)
  return tonumber(string.sub(v, 1, a - 1)), string.sub(v, a + 1, b - 1), string.sub(v, b + 1, c - 1), b, c
end
`;

/** `keys`: how many KEYS every call passes, or 'variable' (the caller passes the count). */
export type ScriptDefinition = { name: string; keys: number | 'variable'; lua: string };

/**
 * KEYS: tx:<id>, txs:<stateHash>. ARGV: id, d, expiresAt, [c, u, s as field/value pairs].
 * Writes both keys with their expiry, or neither when either exists. Returns 1 or 0.
 */
export const createTransactionScript: ScriptDefinition = {
  name: 'authflowCreateTransaction',
  keys: 2,
  lua: `
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'd', ARGV[2], 'e', ARGV[3], unpack(ARGV, 4))
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], ARGV[1], 'PXAT', ARGV[3])
return 1
`,
};

/**
 * Spec 3.1, consume once. KEYS: txs:<stateHash>, tx:<id>. ARGV: id (as the state carries it),
 * now.
 * When the state hash still names that transaction, and it exists, is not consumed and
 * now < expiresAt: sets c = now, deletes the state index (a replayed state finds nothing) and
 * returns the transaction's fields (HGETALL). Otherwise nil.
 */
export const consumeTransactionScript: ScriptDefinition = {
  name: 'authflowConsumeTransaction',
  keys: 2,
  lua: `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end
local f = redis.call('HMGET', KEYS[2], 'e', 'c')
if not f[1] or f[2] or tonumber(ARGV[2]) >= tonumber(f[1]) then return false end
redis.call('HSET', KEYS[2], 'c', ARGV[2])
redis.call('DEL', KEYS[1])
return redis.call('HGETALL', KEYS[2])
`,
};

/**
 * KEYS: tx:<id>. ARGV: now, userId, sessionId, keepUntil.
 * 'not_found' unless the transaction exists, is consumed and now < expiresAt;
 * 'already_bound' when u is set; else sets u and s, extends e and the key's expiry to keepUntil
 * when later, and answers 'bound'.
 */
export const bindTransactionScript: ScriptDefinition = {
  name: 'authflowBindTransaction',
  keys: 1,
  lua: `
local f = redis.call('HMGET', KEYS[1], 'e', 'c', 'u')
if not f[1] or not f[2] or tonumber(ARGV[1]) >= tonumber(f[1]) then return 'not_found' end
if f[3] then return 'already_bound' end
redis.call('HSET', KEYS[1], 'u', ARGV[2], 's', ARGV[3])
if tonumber(ARGV[4]) > tonumber(f[1]) then
  redis.call('HSET', KEYS[1], 'e', ARGV[4])
  redis.call('PEXPIREAT', KEYS[1], ARGV[4])
end
return 'bound'
`,
};

/**
 * Spec 2.9/3.2, at most one handoff per transaction. KEYS: hotx:<txId>, tx:<txId>. ARGV: the
 * handoff's expiresAt.
 * Sets the hotx marker only if absent (SET NX), expiring with the later of the transaction and
 * the handoff, so a second issue conflicts even after the first code was redeemed or expired.
 * Returns 'issued' (the caller then stores the handoff, in its session's slot) or 'conflict'.
 */
export const claimHandoffScript: ScriptDefinition = {
  name: 'authflowClaimHandoff',
  keys: 2,
  lua: `
local keep = ARGV[1]
local txe = redis.call('HGET', KEYS[2], 'e')
if txe and tonumber(txe) > tonumber(keep) then keep = txe end
if not redis.call('SET', KEYS[1], '1', 'NX', 'PXAT', keep) then return 'conflict' end
return 'issued'
`,
};

/**
 * Spec 2.9, 3.2, 4.4: atomically single use. KEYS: ho:<codeHash>, s:<sessionTokenHash> (the
 * session the presented code carries, in the code's slot; the code's key again when it carries
 * none). ARGV: now, platformKey, callbackUrl (the presenter), deadline ('' for none), the
 * session token hash the code carries ('' for none).
 * First, when Redis's clock (TIME) has reached the caller's deadline, answers 'late' and
 * changes nothing: the command waited (a frozen or busy server) until its caller had given up
 * and answered "unavailable", and the code must stay redeemable for the caller's retry.
 * Then it reads the handoff's header lines (no JSON decoding): nil, changing nothing, when
 * unknown, expired (left for Redis to evict at its PXAT; the hotx marker stays), of another
 * layout, sent to another platform or callback, or naming another session than ARGV[5].
 * Otherwise the handoff is deleted, whatever the answer (used → 404), and it answers:
 *   {value}                   a handoff that names no session;
 *   {value, expiresAt, perms} its session is live by now: the session's expiry and current
 *                             permissions JSON;
 *   0                         its session was revoked or expired since issuance.
 */
export const redeemHandoffScript: ScriptDefinition = {
  name: 'authflowRedeemHandoff',
  keys: 2,
  lua: `${PARSE_SESSION}
if ARGV[4] ~= '' then
  local t = redis.call('TIME')
  if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) >= tonumber(ARGV[4]) then
    return 'late'
  end
end
local v = redis.call('GET', KEYS[1])
if not v then return false end
local a = string.find(v, '\\n', 1, true)
if not a then return false end
local now = tonumber(ARGV[1])
local e = tonumber(string.sub(v, 1, a - 1))
if not e or now >= e then return false end
local b = string.find(v, '\\n', a + 1, true)
local c = b and string.find(v, '\\n', b + 1, true)
local d = c and string.find(v, '\\n', c + 1, true)
if not d then return false end
if string.sub(v, a + 1, b - 1) ~= ARGV[2] or string.sub(v, b + 1, c - 1) ~= ARGV[3]
  or string.sub(v, c + 1, d - 1) ~= ARGV[5] then
  return false
end
redis.call('DEL', KEYS[1])
if ARGV[5] == '' then return {v} end
local s = redis.call('GET', KEYS[2])
if not s then return 0 end
local se, uid, perms = parse_session(s)
if now >= se then return 0 end
return {v, string.sub(s, 1, string.find(s, '\\n', 1, true) - 1), perms}
`,
};

/**
 * Spec 4.2 steps 4, 7 and 8 in one step, all or nothing. KEYS: tx:<txId>, s:<tokenHash>,
 * ho:<codeHash> (tx:<txId> again without a handoff), hotx:<txId>, all in the transaction's
 * slot. ARGV: now, userId, sessionId, keepUntil, session value, session expiresAt, handoff
 * value ('' for none), handoff expiresAt.
 * Every check runs before the first write (a Lua error does not undo earlier writes):
 * 'not_found' / 'already_bound' as the bind script; an error reply when the session or the
 * handoff key exists; 'conflict' when the hotx marker exists (with a handoff only). Then it
 * binds the transaction (extending it to keepUntil when later), stores the session and, with
 * a handoff, sets the hotx marker (until the later of the transaction and the handoff) and the
 * handoff. Answers 'bound'. Without a handoff KEYS[3] and KEYS[4] are not touched. The
 * caller has sent the session's index entry before (another slot; indexFirst).
 */
export const createBoundSessionScript: ScriptDefinition = {
  name: 'authflowCreateBoundSession',
  keys: 4,
  lua: `
local f = redis.call('HMGET', KEYS[1], 'e', 'c', 'u')
if not f[1] or not f[2] or tonumber(ARGV[1]) >= tonumber(f[1]) then return 'not_found' end
if f[3] then return 'already_bound' end
local handoff = ARGV[7] ~= ''
if redis.call('EXISTS', KEYS[2]) == 1 then return redis.error_reply('ERR session token hash exists') end
if handoff then
  if redis.call('EXISTS', KEYS[3]) == 1 then return redis.error_reply('ERR handoff code hash exists') end
  if redis.call('EXISTS', KEYS[4]) == 1 then return 'conflict' end
end
local txe = f[1]
redis.call('HSET', KEYS[1], 'u', ARGV[2], 's', ARGV[3])
if tonumber(ARGV[4]) > tonumber(txe) then
  txe = ARGV[4]
  redis.call('HSET', KEYS[1], 'e', txe)
  redis.call('PEXPIREAT', KEYS[1], txe)
end
redis.call('SET', KEYS[2], ARGV[5], 'PXAT', ARGV[6])
if handoff then
  local keep = txe
  if tonumber(ARGV[8]) > tonumber(keep) then keep = ARGV[8] end
  redis.call('SET', KEYS[4], '1', 'PXAT', keep)
  redis.call('SET', KEYS[3], ARGV[7], 'PXAT', ARGV[8])
end
return 'bound'
`,
};

/**
 * KEYS: us:<userId>, and ids:<hash> when the session has an identity session id and the
 * server is not a Cluster (there each index is its own call: another slot). ARGV: now,
 * expiresAt, tokenHash.
 * Adds a session to each index (member = token hash, score = its expiresAt) before the session
 * is written, drops members that expired by now, and keeps each index until its latest member
 * expires.
 */
export const indexSessionScript: ScriptDefinition = {
  name: 'authflowIndexSession',
  keys: 'variable',
  lua: `
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[1])
  redis.call('ZADD', KEYS[i], ARGV[2], ARGV[3])
  local last = redis.call('ZRANGE', KEYS[i], -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', KEYS[i], last[2])
end
return 1
`,
};

/**
 * KEYS: s:<tokenHash>. ARGV: value, expiresAt.
 * Stores the session unless its key exists (an error reply then). The caller has added it to
 * its user's index before (another slot), so no session escapes revokeUserSessions.
 */
export const createSessionScript: ScriptDefinition = {
  name: 'authflowCreateSession',
  keys: 1,
  lua: `
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply('ERR session token hash exists') end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
return 1
`,
};

/**
 * KEYS: s:<tokenHash>.
 * Deletes the session and returns the value it had (nil when there was none); the caller
 * removes the index member afterwards and answers the value only when it was live.
 */
export const revokeSessionScript: ScriptDefinition = {
  name: 'authflowRevokeSession',
  keys: 1,
  lua: `
local v = redis.call('GET', KEYS[1])
if v then redis.call('DEL', KEYS[1]) end
return v
`,
};

/**
 * Spec 3.3. KEYS: s:<tokenHash> (one session of the user's index). ARGV: now.
 * Rewrites a live session that holds permissions with "[]" (KEEPTTL). Returns 1 when it
 * rewrote, 0 when the session holds none or expired, -1 when there is no session.
 */
export const stripSessionPermissionsScript: ScriptDefinition = {
  name: 'authflowStripSessionPermissions',
  keys: 1,
  lua: `${PARSE_SESSION}
local v = redis.call('GET', KEYS[1])
if not v then return -1 end
local e, uid, perms, b, c = parse_session(v)
if perms == '[]' or tonumber(ARGV[1]) >= e then return 0 end
redis.call('SET', KEYS[1], string.sub(v, 1, b) .. '[]' .. string.sub(v, c), 'KEEPTTL')
return 1
`,
};

export const allScripts: ScriptDefinition[] = [
  createTransactionScript,
  consumeTransactionScript,
  bindTransactionScript,
  claimHandoffScript,
  redeemHandoffScript,
  createBoundSessionScript,
  indexSessionScript,
  createSessionScript,
  revokeSessionScript,
  stripSessionPermissionsScript,
];
