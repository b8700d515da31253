// Slot tags: Redis Cluster runs a script only when all its keys hash to one slot, and the
// login's scripts touch a transaction, its handoff and its session together. So a login picks
// one tag, the first eight hex digits of its (random, v4) transaction id, and every credential
// it hands out carries that tag in clear: the state and the session token as
// `<tag>.<random>`, the handoff code as `handoff_<tag>.<random>`. The random part keeps its
// full 256 bits; the tag only names a slot, so it adds nothing an attacker could guess with.
// A credential's hash keeps the tag in front (`<tag>.<SHA-256>`), which is all the store is
// given, and the Redis store names the key `{<tag>}...`. Hashes of credentials without a tag
// (issued before tags, or made up by a caller) stay bare SHA-256 and keep their old keys.
import { randomBytes } from 'node:crypto';
import { hashToken, randomToken } from '@gateway/crypto';

const TAG = /^[0-9a-f]{8}$/;
const TAGGED_CREDENTIAL = /^(?:handoff_)?([0-9a-f]{8})\./;
const TAGGED_HASH = /^([0-9a-f]{8})\.([A-Za-z0-9_-]+)$/;

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
