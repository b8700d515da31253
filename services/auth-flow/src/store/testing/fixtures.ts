// Test support: records with fresh random ids and hashes, so cases never share a key.
import { randomBytes, randomUUID } from 'node:crypto';
import type {
  TransactionKey,
  HandoffKey,
  HandoffPresenter,
  HandoffRecord,
  HandoffSnapshot,
  SessionRecord,
  SessionSnapshot,
  TransactionRecord,
} from '../auth-flow-store.js';
import { randomSlotTag, slotTagOf, splitCredentialHash } from '../slot-tags.js';

export const MINUTE = 60_000;

/** A value shaped like a SHA-256 base64url hash (43 characters). */
export function fakeHash(): string {
  return randomBytes(32).toString('base64url');
}

/** A value shaped like a keyring ciphertext of `plaintextBytes` bytes. */
export function fakeCiphertext(plaintextBytes = 32): string {
  const part = (bytes: number) => randomBytes(bytes).toString('base64url');
  return `v1.k1.${part(12)}.${part(plaintextBytes)}.${part(16)}`;
}

/**
 * A credential hash in the transaction's slot, as the login flow makes them (slot-tags.ts):
 * its state, handoff code and session token carry the transaction id's tag.
 */
export function hashIn(transaction: { id: string } | string): string {
  return `${slotTagOf(typeof transaction === 'string' ? transaction : transaction.id)}.${fakeHash()}`;
}

export function newTransaction(
  now: number,
  overrides: Partial<TransactionRecord> = {},
): TransactionRecord {
  const id = overrides.id ?? randomUUID();
  return {
    id,
    stateHash: hashIn(id),
    nonceHash: fakeHash(),
    pkceVerifierEncrypted: fakeCiphertext(43),
    platformId: randomUUID(),
    platformKey: 'DEMO_PLATFORM',
    environmentKey: 'PROD',
    onboardingMode: 'central',
    centralOnboardingEnabled: true,
    redirectPairId: randomUUID(),
    callbackUrl: 'https://demo.example.com/auth/callback',
    returnTo: 'https://demo.example.com/dashboard?tab=1',
    createdAt: now,
    expiresAt: now + 10 * MINUTE,
    consumedAt: null,
    userId: null,
    sessionId: null,
    ...overrides,
  };
}

export function newHandoff(
  transaction: TransactionRecord,
  now: number,
  overrides: Partial<HandoffRecord> = {},
): HandoffRecord {
  // A handoff that names its session sits in the session's slot, as the login issues it.
  const sessionTag = splitCredentialHash(overrides.sessionTokenHash ?? '').tag;
  return {
    codeHash:
      sessionTag === undefined
        ? hashIn(overrides.transactionId ?? transaction.id)
        : `${sessionTag}.${fakeHash()}`,
    transactionId: transaction.id,
    platformId: transaction.platformId,
    platformKey: transaction.platformKey,
    callbackUrl: transaction.callbackUrl,
    userId: transaction.userId ?? randomUUID(),
    sessionId: transaction.sessionId ?? randomUUID(),
    sessionTokenEncrypted: fakeCiphertext(32),
    snapshot: newHandoffSnapshot(),
    createdAt: now,
    expiresAt: now + MINUTE,
    ...overrides,
  };
}

export function newSession(now: number, overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: randomUUID(),
    tokenHash: `${randomSlotTag()}.${fakeHash()}`,
    userId: randomUUID(),
    environmentKey: 'PROD',
    platformKey: 'DEMO_PLATFORM',
    permissions: ['platforms:admin', 'onboarding:schema:read', 'onboarding:schema:write'],
    idTokenEncrypted: fakeCiphertext(64),
    identitySessionId: null,
    snapshot: newSessionSnapshot(),
    createdAt: now,
    expiresAt: now + 60 * MINUTE,
    ...overrides,
  };
}

/** What a session records for introspection (spec 4.5). */
export function newSessionSnapshot(overrides: Partial<SessionSnapshot> = {}): SessionSnapshot {
  return {
    issuer: 'https://id.example.com/api/auth/env/PROD',
    subject: randomUUID(),
    email: 'someone@example.com',
    emailVerified: true,
    environmentTier: 'production',
    ...overrides,
  };
}

/** What a handoff records for the exchange (spec 4.4). */
export function newHandoffSnapshot(overrides: Partial<HandoffSnapshot> = {}): HandoffSnapshot {
  return {
    user: {
      sub: randomUUID(),
      issuer: 'https://id.example.com/api/auth/env/PROD',
      picture: 'https://cdn.example.com/a.png',
    },
    environment: { key: 'PROD', tier: 'production' },
    onboarding: {
      status: 'IN_PROGRESS',
      requirementVersion: 3,
      missingFields: ['company', 'role'],
      canCompleteCentrally: true,
    },
    returnTo: 'https://demo.example.com/dashboard?tab=1',
    ...overrides,
  };
}

/** The presenter a handoff was sent to: the platform and callback whose key may redeem it. */
export function presenterOf(handoff: {
  platformKey: string;
  callbackUrl: string;
}): HandoffPresenter {
  return { platformKey: handoff.platformKey, callbackUrl: handoff.callbackUrl };
}

/** What the handoff's code names (its hash and its session's), as the exchange presents it. */
export function keyOf(handoff: Pick<HandoffRecord, 'codeHash' | 'sessionTokenHash'>): HandoffKey {
  return {
    codeHash: handoff.codeHash,
    ...(handoff.sessionTokenHash === undefined
      ? {}
      : { sessionTokenHash: handoff.sessionTokenHash }),
  };
}

/** What the transaction's state names (its hash and the transaction id), as a callback presents it. */
export function stateOf(transaction: Pick<TransactionRecord, 'id' | 'stateHash'>): TransactionKey {
  return { stateHash: transaction.stateHash, transactionId: transaction.id };
}
