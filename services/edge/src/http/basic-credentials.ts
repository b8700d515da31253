import { createHash, timingSafeEqual } from 'node:crypto';
import type { Client } from '@connectrpc/connect';
import type { RegistryService } from '@gateway/contracts';
import { FeedCache, type ChangeFeed } from '@gateway/db';
import { fromConnectError, GatewayError } from '@gateway/errors';
import { PLATFORM_AUTHENTICATION_LIMITS } from '../auth/platform-authentication-limits.js';

/** `WWW-Authenticate` of every 401 answered for platform Basic credentials (RFC 7617). */
export const BASIC_CHALLENGE = 'Basic realm="gateway"';

export type BasicCredentials = { clientId: string; clientSecret: string };

/** Platform credential kinds (spec 2.3). */
export type PlatformCredentialKind = 'bff' | 'backend';

/** The platform behind verified Basic credentials (spec 5, platformBasicAuth). */
export type PlatformCaller = {
  credentialId: string;
  kind: PlatformCredentialKind;
  platformKey: string;
  /** The callback URL a BFF key serves: the only one whose codes it may redeem (spec 5). */
  callbackUrl: string | undefined;
};

// Bounds that no issued credential comes near (ids `gwc_` + 22 characters, secrets `gws_` +
// 43); anything longer is refused without asking the registry.
const MAX_HEADER_LENGTH = 2048;
const MAX_CLIENT_ID_LENGTH = 256;
const MAX_CLIENT_SECRET_LENGTH = 512;

// RFC 7617 section 2: `Basic` (case-insensitive), then token68 carrying base64 of
// `user-id ":" password`. Padding may be missing; other characters may not appear.
const BASIC = /^Basic[ ]+([A-Za-z0-9+/]+={0,2})[ ]*$/i;
// RFC 7617 section 2: neither part may contain control characters.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function unauthorized(message: string): GatewayError {
  return new GatewayError('UNAUTHORIZED', message);
}

/**
 * The client id and secret of an `Authorization: Basic` header. Throws UNAUTHORIZED when the
 * header is missing, of another scheme or malformed.
 *
 * Both parts are percent-decoded after the base64 step: RFC 6749 section 2.3.1 has clients
 * form-encode id and secret before building the header. Issued ids and secrets consist of
 * unreserved characters only, so for them the decoding changes nothing. A `+` is kept as
 * it is rather than read as a space: clients that skip the encoding send it literally.
 * A malformed escape (`%zz`) is a malformed credential.
 */
export function parseBasicCredentials(header: string | undefined): BasicCredentials {
  if (header === undefined || header.trim() === '') {
    throw unauthorized('Platform credentials are required (HTTP Basic).');
  }
  const match = header.length <= MAX_HEADER_LENGTH ? BASIC.exec(header) : null;
  if (match?.[1] === undefined) throw unauthorized('The Basic credentials are malformed.');
  let decoded: string;
  try {
    decoded = utf8.decode(Buffer.from(match[1], 'base64'));
  } catch {
    throw unauthorized('The Basic credentials are malformed.');
  }
  // The user-id cannot contain a colon; the password may (RFC 7617 section 2).
  const colon = decoded.indexOf(':');
  if (colon < 0) throw unauthorized('The Basic credentials are malformed.');
  let clientId: string;
  let clientSecret: string;
  try {
    clientId = decodeURIComponent(decoded.slice(0, colon));
    clientSecret = decodeURIComponent(decoded.slice(colon + 1));
  } catch {
    throw unauthorized('The Basic credentials are malformed.');
  }
  if (
    clientId === '' ||
    clientSecret === '' ||
    clientId.length > MAX_CLIENT_ID_LENGTH ||
    clientSecret.length > MAX_CLIENT_SECRET_LENGTH ||
    CONTROL_CHARACTERS.test(clientId) ||
    CONTROL_CHARACTERS.test(clientSecret)
  ) {
    throw unauthorized('The Basic credentials are malformed.');
  }
  return { clientId, clientSecret };
}

/**
 * What the edge knows of a client id is kept this long at most (a missed change
 * announcement) while the id is known: a key revoked, rotated or deleted, or a platform
 * deactivated, stops working everywhere within it even then.
 */
export const CREDENTIAL_CACHE_TTL_MS = 10_000;

/** An unknown client id is remembered this long (the back-off window) unless a change is announced. */
export const UNKNOWN_CLIENT_ID_TTL_MS = PLATFORM_AUTHENTICATION_LIMITS.windowMs;

export type PlatformCredentialVerifier = {
  /**
   * The platform behind an `Authorization: Basic` header (spec 5, platformBasicAuth). Throws
   * UNAUTHORIZED for missing, malformed, unknown or wrong credentials and for the keys of a
   * platform that is not active: an inactive platform's keys do not authenticate (the spec's
   * 404 is for a code, not for credentials), and the answer does not reveal that the key
   * exists.
   */
  verify(authorization: string | undefined): Promise<PlatformCaller>;
};

/** What the registry said of one client id: enough to check its secrets here. */
type KnownClientId = {
  caller: PlatformCaller | 'inactive';
  /** SHA-256 of the current secret, as the registry stores it (decoded once, here). */
  secretHash: Buffer;
  previousSecretHash: Buffer | undefined;
  previousSecretExpiresAt: number;
};

type ClientIdKnowledge = KnownClientId | 'unknown';

/**
 * Verifies Basic credentials with what the registry says of their client id, kept per
 * client id: the platform and redirect pair of the key, and the SHA-256 hashes of its
 * current and (during its grace period) previous secret, which the registry stores. Issued
 * secrets are 256-bit random, so one SHA-256 compared in constant time checks a presented
 * secret here as well as in the registry. The first attempt with a client id asks the
 * registry (which records a use when its secret matches); further attempts, right or wrong,
 * are checked here while the knowledge is kept: up to 10 s for a known client id, for the
 * back-off window for an unknown one, and dropped at once when the change feed announces a
 * registry change (a key revoked, rotated or deleted, a platform deactivated). So a flood of
 * wrong secrets costs the registry at most one call per known client id per 10 s, and a
 * flood of made-up ids one call per id per window, whatever their rate. While the feed is
 * disconnected nothing is kept and every attempt asks the registry.
 */
export function createPlatformCredentialVerifier(
  registry: Client<typeof RegistryService>,
  options: { feed: ChangeFeed; ttlMs?: number; unknownTtlMs?: number; now?: () => number },
): PlatformCredentialVerifier {
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? CREDENTIAL_CACHE_TTL_MS;
  const unknownTtlMs = options.unknownTtlMs ?? UNKNOWN_CLIENT_ID_TTL_MS;
  const cache = new FeedCache<ClientIdKnowledge>({
    feed: options.feed,
    ttlMs: Math.max(ttlMs, unknownTtlMs),
    maxEntries: 10_000,
    now,
  });
  const expiresAt = (knowledge: ClientIdKnowledge) =>
    now() + (knowledge === 'unknown' ? unknownTtlMs : ttlMs);
  return {
    async verify(authorization) {
      const { clientId, clientSecret } = parseBasicCredentials(authorization);
      let knowledge: ClientIdKnowledge;
      try {
        knowledge = await cache.get(
          clientId,
          () => askRegistry(registry, clientId, clientSecret),
          expiresAt,
        );
      } catch (error) {
        throw fromConnectError(error);
      }
      if (knowledge === 'unknown' || !secretMatches(knowledge, clientSecret, now())) {
        throw unauthorized('Invalid platform credentials.');
      }
      if (knowledge.caller === 'inactive') {
        throw unauthorized('The platform of these credentials is not active.');
      }
      return knowledge.caller;
    },
  };
}

/** The registry's knowledge of a client id; an unknown one (UNAUTHORIZED) is `unknown`. */
async function askRegistry(
  registry: Client<typeof RegistryService>,
  clientId: string,
  clientSecret: string,
): Promise<ClientIdKnowledge> {
  const answer = await registry
    .verifyPlatformCredential({ clientId, clientSecret })
    .catch((error: unknown) => {
      const failure = fromConnectError(error);
      if (failure instanceof GatewayError && failure.code === 'UNAUTHORIZED') return undefined;
      throw failure;
    });
  if (answer === undefined) return 'unknown';
  if (answer.kind !== 'bff' && answer.kind !== 'backend') {
    throw new Error(`Unknown credential kind from the registry: ${answer.kind}`);
  }
  return {
    caller: answer.platformActive
      ? {
          credentialId: answer.credentialId,
          kind: answer.kind,
          platformKey: answer.platformKey,
          callbackUrl: answer.callbackUrl,
        }
      : 'inactive',
    secretHash: Buffer.from(answer.secretHash, 'base64url'),
    previousSecretHash:
      answer.previousSecretHash === undefined
        ? undefined
        : Buffer.from(answer.previousSecretHash, 'base64url'),
    previousSecretExpiresAt: Number(answer.previousSecretExpiresAtMs),
  };
}

/** The presented secret against the stored hashes, in constant time (as the registry does). */
function secretMatches(known: KnownClientId, clientSecret: string, at: number): boolean {
  const presented = createHash('sha256').update(clientSecret, 'utf8').digest();
  const current = hashEquals(presented, known.secretHash);
  const previous =
    known.previousSecretHash !== undefined &&
    known.previousSecretExpiresAt > at &&
    hashEquals(presented, known.previousSecretHash);
  return current || previous;
}

function hashEquals(presented: Buffer, stored: Buffer): boolean {
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}

/** A kind the operation does not accept: 403 FORBIDDEN (spec 4.4: a backend key on exchange). */
export function requireCredentialKind(
  caller: PlatformCaller,
  accept: readonly PlatformCredentialKind[],
): void {
  if (!accept.includes(caller.kind)) {
    throw new GatewayError('FORBIDDEN', `A ${caller.kind} key cannot be used on this operation.`);
  }
}

/** RFC 7617: every 401 for platform credentials names the Basic scheme. */
export function basicChallengeFor(error: GatewayError): string | undefined {
  return error.code === 'UNAUTHORIZED' ? BASIC_CHALLENGE : undefined;
}
