import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { hashToken, randomToken, tokenHashEquals } from '@gateway/crypto';
import { GatewayError } from '@gateway/errors';

export type CredentialKind = 'bff' | 'backend';

export type CredentialRow = {
  id: string;
  platform_id: string;
  kind: CredentialKind;
  redirect_pair_id: string | null;
  client_id: string;
  secret_hash: string;
  previous_secret_hash: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  rotated_at: Date | null;
  last_used_at: Date | null;
};

/** A credential with its secret: what create, issue and rotate return once (spec 2.3). */
export type IssuedCredential = {
  id: string;
  kind: CredentialKind;
  redirectPairId: string | null;
  clientId: string;
  clientSecret: string;
};

const table = 'registry.platform_credentials';

/** Spec 8: the previous secret stays valid 60 minutes after a rotation. */
export const PREVIOUS_SECRET_GRACE_MS = 60 * 60 * 1000;

const newClientId = () => `gwc_${randomBytes(16).toString('base64url')}`;
// 256-bit random secrets: hashing them with SHA-256 is enough (no password hashing needed).
const newClientSecret = () => `gws_${randomToken(32)}`;

export async function issueCredential(
  trx: Knex.Transaction,
  platformId: string,
  kind: CredentialKind,
  redirectPairId: string | null,
): Promise<IssuedCredential> {
  const credential: IssuedCredential = {
    id: randomUUID(),
    kind,
    redirectPairId,
    clientId: newClientId(),
    clientSecret: newClientSecret(),
  };
  await trx(table).insert({
    id: credential.id,
    platform_id: platformId,
    kind,
    redirect_pair_id: redirectPairId,
    client_id: credential.clientId,
    secret_hash: hashToken(credential.clientSecret),
    created_at: new Date(),
  });
  return credential;
}

/**
 * Rotation (spec 4.10): a new secret, returned once. The previous secret stays valid for
 * 60 minutes unless revoked at once or the client id is rotated too (then the old id and
 * secret stop working immediately).
 */
export async function rotateCredential(
  trx: Knex.Transaction,
  current: CredentialRow,
  options: { revokePreviousImmediately: boolean; rotateClientId: boolean },
): Promise<IssuedCredential> {
  const now = new Date();
  const clientSecret = newClientSecret();
  const clientId = options.rotateClientId ? newClientId() : current.client_id;
  const keepPrevious = !options.revokePreviousImmediately && !options.rotateClientId;
  await trx(table)
    .where({ id: current.id })
    .update({
      client_id: clientId,
      secret_hash: hashToken(clientSecret),
      previous_secret_hash: keepPrevious ? current.secret_hash : null,
      previous_secret_expires_at: keepPrevious
        ? new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS)
        : null,
      rotated_at: now,
    });
  return {
    id: current.id,
    kind: current.kind,
    redirectPairId: current.redirect_pair_id,
    clientId,
    clientSecret,
  };
}

export type VerifiedCredential = {
  credential: CredentialRow;
  platformKey: string;
  platformStatus: string;
  callbackUrl: string | null;
  /** Whether the presented secret is the current one or, during its grace period, the previous. */
  secretMatches: boolean;
};

/**
 * Checks Basic credentials of a platform backend: one indexed lookup by client id and one
 * SHA-256 compared in constant time, against the current secret and, during its grace
 * period, the previous one. An unknown client id is UNAUTHORIZED; a known one answers the
 * credential with `secretMatches`, so that the edge can check further guesses itself.
 */
export async function verifyCredential(
  knex: Knex,
  clientId: string,
  clientSecret: string,
  now: Date,
): Promise<VerifiedCredential> {
  const row = (await knex(table)
    .select(
      `${table}.*`,
      'registry.platforms.platform_key',
      'registry.platforms.status as platform_status',
      'registry.redirect_pairs.callback_url',
    )
    .join('registry.platforms', 'registry.platforms.id', `${table}.platform_id`)
    .leftJoin('registry.redirect_pairs', 'registry.redirect_pairs.id', `${table}.redirect_pair_id`)
    .where(`${table}.client_id`, clientId)
    .first()) as
    | (CredentialRow & {
        platform_key: string;
        platform_status: string;
        callback_url: string | null;
      })
    | undefined;
  const presented = hashToken(clientSecret);
  const matches =
    row !== undefined &&
    (tokenHashEquals(presented, row.secret_hash) ||
      (row.previous_secret_hash !== null &&
        row.previous_secret_expires_at !== null &&
        row.previous_secret_expires_at.getTime() > now.getTime() &&
        tokenHashEquals(presented, row.previous_secret_hash)));
  if (row === undefined) {
    throw new GatewayError('UNAUTHORIZED', 'Invalid platform credentials.');
  }
  const { platform_key, platform_status, callback_url, ...credential } = row;
  return {
    credential,
    platformKey: platform_key,
    platformStatus: platform_status,
    callbackUrl: callback_url,
    secretMatches: matches,
  };
}

/**
 * Records when a credential was last used without a write per request: at most one
 * update per credential per minute, done off the request path.
 */
export function createLastUsedRecorder(knex: Knex, onError: (error: unknown) => void) {
  const recentlyRecorded = new Map<string, number>();
  const intervalMs = 60_000;
  return function recordUse(credentialId: string, now: Date): void {
    const last = recentlyRecorded.get(credentialId);
    if (last !== undefined && now.getTime() - last < intervalMs) return;
    recentlyRecorded.set(credentialId, now.getTime());
    if (recentlyRecorded.size > 10_000) recentlyRecorded.clear();
    void knex(table)
      .where({ id: credentialId })
      .andWhere((q: Knex.QueryBuilder) =>
        q
          .whereNull('last_used_at')
          .orWhere('last_used_at', '<', new Date(now.getTime() - intervalMs)),
      )
      .update({ last_used_at: now })
      .catch(onError);
  };
}
