// Slot tags: Redis Cluster runs a script only when all its keys hash to one slot, and the
// login's scripts touch a transaction, its handoff and its session together. So a login picks
// one tag, the first eight hex digits of its (random, v4) transaction id, and every credential
// it hands out carries that tag in clear: the state and the session token as
// `<tag>.<random>`, the handoff code as `handoff_<tag>.<random>`. The random part keeps its
// full 256 bits; the tag only names a slot, so it adds nothing an attacker could guess with.
// A credential's hash keeps the tag in front (`<tag>.<SHA-256>`), which is all the store is
// given, and the Redis store names the key `{<tag>}...`. Hashes of credentials without a tag
// (issued before tags, or made up by a caller) stay bare SHA-256 and keep their old keys.
//
// The state also carries its transaction's id, `<tag>.<random>.<transactionId>`, so the
// callback names the transaction's keys without reading the state's index first.
//
// A handoff code also carries its session's lookup key, so the exchange names the session's
// key without reading the handoff first: `handoff_<tag>.<random>.<session token hash>`, the
// tag being the session's (the code and its session share a slot). The session token hash is
// the store's key, not a secret: nothing accepts a hash in place of a token.
import { randomBytes } from 'node:crypto';
import { hashToken, randomToken } from '@gateway/crypto';
import type { HandoffKey, TransactionKey } from './auth-flow-store.js';

const TAG = /^[0-9a-f]{8}$/;
const TAGGED_CREDENTIAL = /^(?:handoff_)?([0-9a-f]{8})\./;
const TAGGED_HASH = /^([0-9a-f]{8})\.([A-Za-z0-9_-]+)$/;
/** `<tag>.<random>.<transactionId>`: the random part has no dot. */
const STATE =
  /^([0-9a-f]{8})\.[A-Za-z0-9_-]+\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
/** `handoff_<tag>.<random>.<session token hash>`: the random part has no dot. */
const HANDOFF_CODE =
  /^handoff_([0-9a-f]{8})\.[A-Za-z0-9_-]+\.((?:[0-9a-f]{8}\.)?[A-Za-z0-9_-]{43})$/;

/** The slot tag of a transaction: its id's first eight hex digits, lower case. */
export function slotTagOf(transactionId: string): string {
  return transactionId.slice(0, 8).toLowerCase();
}

/** A tag for a session that no login transaction names (eight random hex digits). */
export function randomSlotTag(): string {
  return randomBytes(4).toString('hex');
}

/** A new credential in the tag's slot: `<prefix><tag>.<random base64url>`. */
export function taggedToken(tag: string, prefix = ''): string {
  if (!TAG.test(tag)) throw new RangeError('A slot tag is eight lower-case hex digits');
  return `${prefix}${tag}.${randomToken()}`;
}

/**
 * What the store keeps of a credential: `<tag>.<SHA-256 of the whole credential>` when the
 * credential carries a tag, the bare SHA-256 (base64url) otherwise.
 */
export function hashCredential(credential: string): string {
  const hash = hashToken(credential);
  const tag = TAGGED_CREDENTIAL.exec(credential)?.[1];
  return tag === undefined ? hash : `${tag}.${hash}`;
}

/** The tag and the hash of a stored credential hash, or no tag for a bare one. */
export function splitCredentialHash(hash: string): { tag: string | undefined; hash: string } {
  const match = TAGGED_HASH.exec(hash);
  if (match === null) return { tag: undefined, hash };
  return { tag: match[1], hash: match[2] ?? '' };
}

/**
 * A new handoff code for the session with this token hash, in the session's slot: tagged with
 * the session's tag, or `fallbackTag` for a session hash without one (signed in before tags).
 */
export function newHandoffCode(sessionTokenHash: string, fallbackTag: string): string {
  const tag = splitCredentialHash(sessionTokenHash).tag ?? fallbackTag;
  return `${taggedToken(tag, 'handoff_')}.${sessionTokenHash}`;
}

/**
 * What a presented code names: its hash, and the session it carries when it carries one in
 * its own slot (a session hash tagged with the code's tag, or a bare one). Any other code names
 * no session, and so no handoff that names one.
 */
export function handoffKeyOf(code: string): HandoffKey {
  const codeHash = hashCredential(code);
  const match = HANDOFF_CODE.exec(code);
  const sessionTokenHash = match?.[2];
  if (sessionTokenHash === undefined) return { codeHash };
  const sessionTag = splitCredentialHash(sessionTokenHash).tag;
  if (sessionTag !== undefined && sessionTag !== match?.[1]) return { codeHash };
  return { codeHash, sessionTokenHash };
}

/** A new `state` for the transaction: in its slot, carrying its id. */
export function newState(transactionId: string): string {
  return `${taggedToken(slotTagOf(transactionId))}.${transactionId}`;
}

/**
 * What a presented `state` names: its hash and the transaction id it carries, in the same
 * slot; undefined for any other state (it names no transaction).
 */
export function transactionKeyOf(state: string): TransactionKey | undefined {
  const match = STATE.exec(state);
  const transactionId = match?.[2];
  if (transactionId === undefined || slotTagOf(transactionId) !== match?.[1]) return undefined;
  return { stateHash: hashCredential(state), transactionId };
}
