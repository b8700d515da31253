// The Lua scripts of the Redis store: every check-and-set and consume-once step runs as one
// script, so Redis executes it atomically. ioredis `defineCommand` sends EVALSHA and falls back
// to EVAL on NOSCRIPT (after a restart or SCRIPT FLUSH).
//
// KEYS get the connection's key prefix from ioredis. A few keys can only be known inside the
// script (the transaction id behind a state hash, the sessions of a user, the session a
// handoff names), so scripts build them from ARGV[1] = the key prefix. That requires one Redis
// node (or a primary with replicas / Sentinel), not Redis Cluster.
//
// Times are epoch milliseconds passed in from the caller's clock (`now`), so expiry is exact
// even before Redis evicts the key (every key also carries PEXPIREAT/PXAT). 13-digit numbers
// are exact in Lua's doubles; values are written back as the strings they came in. The one
// reading of Redis's own clock (TIME) is the redeem's deadline check, which asks whether the
// caller is still waiting at the moment the script runs.
//
// Value layouts (see redis-auth-flow-store.ts for the TypeScript side):
//   tx:<id>            hash  d = JSON of the fixed fields, e = expiresAt, c = consumedAt,
//                            u = userId, s = sessionId (c, u, s absent until set)
//   txs:<stateHash>    string transaction id (deleted when the transaction is consumed)
//   ho:<codeHash>      string "<expiresAt><mark><JSON>", mark = "\n" while pending, "r" once
//                            redeemed (kept until expiresAt for a repeated redeem)
//   hotx:<txId>        string "1": a handoff was issued for this transaction
//   s:<tokenHash>      string "<expiresAt>\n<userId>\n<permissions JSON>\n<JSON rest>[\n<bytes>]"
//   us:<userId>        sorted set: member = session token hash, score = its expiresAt

/** Splits a session value into expiresAt, userId, permissions JSON and the two cut points. */
const PARSE_SESSION = `
local function parse_session(v)
  local a = string.find(v, '\\n', 1, true)
  local b = string.find(v, '\\n', a + 1, true)
  local c = string.find(v, '\\n', b + 1, true)
  return tonumber(string.sub(v, 1, a - 1)), string.sub(v, a + 1, b - 1), string.sub(v, b + 1, c - 1), b, c
end
`;

export type ScriptDefinition = { name: string; keys: number; lua: string };

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
 * Spec 3.1, consume once. KEYS: txs:<stateHash>. ARGV: prefix, now.
 * When the state hash names a transaction that exists, is not consumed and now < expiresAt:
 * sets c = now, deletes the state index (a replayed state finds nothing) and returns the
 * transaction's fields (HGETALL). Otherwise nil.
 */
export const consumeTransactionScript: ScriptDefinition = {
  name: 'authflowConsumeTransaction',
  keys: 1,
  lua: `
local id = redis.call('GET', KEYS[1])
if not id then return false end
local key = ARGV[1] .. 'tx:' .. id
local f = redis.call('HMGET', key, 'e', 'c')
if not f[1] or f[2] or tonumber(ARGV[2]) >= tonumber(f[1]) then return false end
redis.call('HSET', key, 'c', ARGV[2])
redis.call('DEL', KEYS[1])
return redis.call('HGETALL', key)
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
 * Spec 2.9/3.2, at most one handoff per transaction. KEYS: ho:<codeHash>, hotx:<txId>,
 * tx:<txId>. ARGV: value, expiresAt.
 * Sets the hotx marker only if absent (SET NX), expiring with the later of the transaction and
 * the handoff, so a second issue conflicts even after the first code was redeemed or expired;
 * then stores the handoff until its expiresAt. Returns 'issued' or 'conflict'.
 */
export const issueHandoffScript: ScriptDefinition = {
  name: 'authflowIssueHandoff',
  keys: 3,
  lua: `
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply('ERR handoff code hash exists') end
local keep = ARGV[2]
local txe = redis.call('HGET', KEYS[3], 'e')
if txe and tonumber(txe) > tonumber(keep) then keep = txe end
if not redis.call('SET', KEYS[2], '1', 'NX', 'PXAT', keep) then return 'conflict' end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
return 'issued'
`,
};

/**
 * Spec 3.2, 4.4. KEYS: ho:<codeHash>. ARGV: prefix, now, platformKey, callbackUrl (the
 * presenter), deadline ('' for none).
 * First, when Redis's clock (TIME) has reached the caller's deadline, answers 'late' and
 * changes nothing: the command waited (a frozen or busy server) until its caller had given up
 * and answered "unavailable", and the code must stay redeemable for the caller's retry.
 * Otherwise, when now < the handoff's expiresAt and it was sent to the presenter's platform
 * and callback (another presenter's leaves it as it is; an expired one is left for Redis to
 * evict at its PXAT; the hotx marker stays), it answers:
 *   nil                       unknown, expired, or another presenter's;
 *   {value}                   a handoff that names no session (issued before): single use,
 *                             deleted;
 *   {value, expiresAt, perms} its session s:<sessionTokenHash> is live by now: the session's
 *                             expiry and current permissions JSON. A pending handoff is marked
 *                             redeemed in place (SETRANGE keeps its PXAT) and stays until its
 *                             expiry, so its presenter may redeem it again and get the same
 *                             answer; the value's mark tells the caller which redeem this is;
 *   0                         its session was revoked or expired since issuance: deleted.
 */
export const redeemHandoffScript: ScriptDefinition = {
  name: 'authflowRedeemHandoff',
  keys: 1,
  lua: `${PARSE_SESSION}
if ARGV[5] ~= '' then
  local t = redis.call('TIME')
  if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) >= tonumber(ARGV[5]) then
    return 'late'
  end
end
local v = redis.call('GET', KEYS[1])
if not v then return false end
local e, mark = string.match(v, '^(%d+)([\\nr])')
local now = tonumber(ARGV[2])
if not e or now >= tonumber(e) then return false end
local d = cjson.decode(string.sub(v, #e + 2))
if d.platformKey ~= ARGV[3] or d.callbackUrl ~= ARGV[4] then return false end
local h = d.sessionTokenHash
if type(h) ~= 'string' then
  redis.call('DEL', KEYS[1])
  return {v}
end
local s = redis.call('GET', ARGV[1] .. 's:' .. h)
local se, uid, perms
if s then se, uid, perms = parse_session(s) end
if not s or now >= se then
  redis.call('DEL', KEYS[1])
  return 0
end
if mark == '\\n' then redis.call('SETRANGE', KEYS[1], #e, 'r') end
return {v, string.sub(s, 1, string.find(s, '\\n', 1, true) - 1), perms}
`,
};

/**
 * Spec 4.2 steps 4, 7 and 8 in one step, all or nothing. KEYS: tx:<txId>, s:<tokenHash>,
 * us:<userId>, ho:<codeHash>, hotx:<txId>. ARGV: now, userId, sessionId, keepUntil, session
 * value, session expiresAt, tokenHash, handoff value ('' for none), handoff expiresAt.
 * Every check runs before the first write (a Lua error does not undo earlier writes):
 * 'not_found' / 'already_bound' as the bind script; an error reply when the session or the
 * handoff key exists; 'conflict' when the hotx marker exists (with a handoff only). Then it
 * binds the transaction (extending it to keepUntil when later), stores the session with its
 * index entry as the create-session script does and, with a handoff, sets the hotx marker
 * (until the later of the transaction and the handoff) and the handoff. Answers 'bound'.
 * Without a handoff KEYS[4] and KEYS[5] are not touched.
 */
export const createBoundSessionScript: ScriptDefinition = {
  name: 'authflowCreateBoundSession',
  keys: 5,
  lua: `
local f = redis.call('HMGET', KEYS[1], 'e', 'c', 'u')
if not f[1] or not f[2] or tonumber(ARGV[1]) >= tonumber(f[1]) then return 'not_found' end
if f[3] then return 'already_bound' end
local handoff = ARGV[8] ~= ''
if redis.call('EXISTS', KEYS[2]) == 1 then return redis.error_reply('ERR session token hash exists') end
if handoff then
  if redis.call('EXISTS', KEYS[4]) == 1 then return redis.error_reply('ERR handoff code hash exists') end
  if redis.call('EXISTS', KEYS[5]) == 1 then return 'conflict' end
end
local txe = f[1]
redis.call('HSET', KEYS[1], 'u', ARGV[2], 's', ARGV[3])
if tonumber(ARGV[4]) > tonumber(txe) then
  txe = ARGV[4]
  redis.call('HSET', KEYS[1], 'e', txe)
  redis.call('PEXPIREAT', KEYS[1], txe)
end
redis.call('SET', KEYS[2], ARGV[5], 'PXAT', ARGV[6])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[6], ARGV[7])
local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[3], last[2])
if handoff then
  local keep = txe
  if tonumber(ARGV[9]) > tonumber(keep) then keep = ARGV[9] end
  redis.call('SET', KEYS[5], '1', 'PXAT', keep)
  redis.call('SET', KEYS[4], ARGV[8], 'PXAT', ARGV[9])
end
return 'bound'
`,
};

/**
 * KEYS: s:<tokenHash>, us:<userId>. ARGV: value, expiresAt, tokenHash, now.
 * Stores the session and adds it to the user's index in one step (a session missing from the
 * index would escape revokeUserSessions). Drops index members that expired by now, and keeps
 * the index until its latest session expires.
 */
export const createSessionScript: ScriptDefinition = {
  name: 'authflowCreateSession',
  keys: 2,
  lua: `
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply('ERR session token hash exists') end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[2], last[2])
return 1
`,
};

/**
 * KEYS: s:<tokenHash>. ARGV: prefix, now, tokenHash.
 * Deletes the session and its index entry; returns the value when it was live (now < expiresAt).
 */
export const revokeSessionScript: ScriptDefinition = {
  name: 'authflowRevokeSession',
  keys: 1,
  lua: `${PARSE_SESSION}
local v = redis.call('GET', KEYS[1])
if not v then return false end
redis.call('DEL', KEYS[1])
local e, uid = parse_session(v)
redis.call('ZREM', ARGV[1] .. 'us:' .. uid, ARGV[3])
if tonumber(ARGV[2]) >= e then return false end
return v
`,
};

/**
 * KEYS: us:<userId>. ARGV: prefix, now.
 * Deletes every session of the user still live by now, and the index. Returns how many
 * session keys it deleted (index members whose score, their expiresAt, is after now).
 */
export const revokeUserSessionsScript: ScriptDefinition = {
  name: 'authflowRevokeUserSessions',
  keys: 1,
  lua: `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
local n = 0
for _, h in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  n = n + redis.call('DEL', ARGV[1] .. 's:' .. h)
end
redis.call('DEL', KEYS[1])
return n
`,
};

/**
 * Spec 3.3. KEYS: us:<userId>. ARGV: prefix, now.
 * Rewrites each live session of the user that holds permissions with "[]" (KEEPTTL), and drops
 * index members that expired or whose session is gone. Returns how many it rewrote.
 */
export const stripUserPermissionsScript: ScriptDefinition = {
  name: 'authflowStripUserPermissions',
  keys: 1,
  lua: `${PARSE_SESSION}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
local n = 0
for _, h in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local key = ARGV[1] .. 's:' .. h
  local v = redis.call('GET', key)
  if not v then
    redis.call('ZREM', KEYS[1], h)
  else
    local e, uid, perms, b, c = parse_session(v)
    if perms ~= '[]' and tonumber(ARGV[2]) < e then
      redis.call('SET', key, string.sub(v, 1, b) .. '[]' .. string.sub(v, c), 'KEEPTTL')
      n = n + 1
    end
  end
end
return n
`,
};

export const allScripts: ScriptDefinition[] = [
  createTransactionScript,
  consumeTransactionScript,
  bindTransactionScript,
  issueHandoffScript,
  redeemHandoffScript,
  createBoundSessionScript,
  createSessionScript,
  revokeSessionScript,
  revokeUserSessionsScript,
  stripUserPermissionsScript,
];
