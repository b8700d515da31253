import { randomUUID } from 'node:crypto';
import type { JsonObject } from '@bufbuild/protobuf';
import type { Knex } from 'knex';
import { isUniqueViolation } from '@gateway/db';
import { GatewayError } from '@gateway/errors';
import { appendAuditRecord } from './audit-log.js';
import {
  issueCredential,
  rotateCredential,
  type CredentialKind,
  type CredentialRow,
  type IssuedCredential,
} from './credentials.js';
import type { ChangeContext, EnvironmentRow } from './identity-environments.js';
import {
  normalizeCallbackUrl,
  normalizeReturnUrl,
  requirePublicHttpsUrls,
} from './platform-urls.js';
import { DEPLOYMENT_ENVIRONMENT_KEY, type RegistryDeps } from './registry-deps.js';

export type PlatformStatus = 'active' | 'inactive' | 'archived';
export type OnboardingMode = 'none' | 'platform' | 'central';

export type PlatformRow = {
  id: string;
  platform_key: string;
  display_name: string;
  status: PlatformStatus;
  central_onboarding_enabled: boolean;
  platform_onboarding_path: string | null;
  default_onboarding_mode: OnboardingMode;
  identity_environment_id: string;
  metadata: JsonObject;
  /** Its logins' sessions may act as admin credentials (docs/decisions.md). */
  admin_console: boolean;
  /** Its sessions created before this instant are ended (set on deactivate and archive). */
  sessions_not_before: Date | null;
  created_at: Date;
  updated_at: Date;
};

export type PairRow = {
  id: string;
  platform_id: string;
  position: number;
  label: string;
  return_url: string;
  callback_url: string;
  is_default: boolean;
  created_at: Date;
};

export type PlatformView = {
  platform: PlatformRow;
  pairs: PairRow[];
  credentials: CredentialRow[];
  environment: Pick<EnvironmentRow, 'environment_key' | 'display_name' | 'tier' | 'active'>;
  /** Spec 2.1: true when every pair's callback is served by a BFF key. */
  credentialsConfigured: boolean;
};

export type PairInput = {
  id?: string | undefined;
  label: string;
  returnUrl: string;
  callbackUrl: string;
  isDefault: boolean;
};

const platforms = 'registry.platforms';
const pairsTable = 'registry.redirect_pairs';
const credentialsTable = 'registry.platform_credentials';
const environments = 'registry.identity_environments';

// ---------------------------------------------------------------------------- reading

async function loadViews(knex: Knex, rows: PlatformRow[]): Promise<PlatformView[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.id);
  // One after another: inside a create or update transaction these share its one connection,
  // where pg deprecates a query sent while another runs (pg 9 refuses it); an admin read
  // loses nothing by it.
  const pairs = (await knex(pairsTable)
    .whereIn('platform_id', ids)
    .orderBy('position')) as PairRow[];
  const credentials = (await knex(credentialsTable)
    .whereIn('platform_id', ids)
    .orderBy('created_at')) as CredentialRow[];
  const envs = (await knex(environments)
    .select('id', 'environment_key', 'display_name', 'tier', 'active')
    .whereIn('id', [
      ...new Set(rows.map((row) => row.identity_environment_id)),
    ])) as (EnvironmentRow & {
    id: string;
  })[];
  return rows.map((platform) => {
    const ownPairs = pairs.filter((pair) => pair.platform_id === platform.id);
    const ownCredentials = credentials.filter((c) => c.platform_id === platform.id);
    const environment = envs.find((env) => env.id === platform.identity_environment_id);
    if (environment === undefined) throw new Error(`platform ${platform.id} has no environment`);
    const served = new Set(
      ownCredentials
        .filter((c) => c.kind === 'bff')
        .map((c) => ownPairs.find((pair) => pair.id === c.redirect_pair_id)?.callback_url),
    );
    return {
      platform,
      pairs: ownPairs,
      credentials: ownCredentials,
      environment,
      credentialsConfigured:
        ownPairs.length > 0 && ownPairs.every((pair) => served.has(pair.callback_url)),
    };
  });
}

async function requirePlatformRow(
  knex: Knex,
  platformKey: string,
  forUpdate = false,
): Promise<PlatformRow> {
  const query = knex(platforms).where({ platform_key: platformKey });
  if (forUpdate) query.forUpdate();
  const row = (await query.first()) as PlatformRow | undefined;
  if (row === undefined)
    throw new GatewayError('NOT_FOUND', `Platform ${platformKey} does not exist.`);
  return row;
}

export async function getPlatform(knex: Knex, platformKey: string): Promise<PlatformView> {
  const [view] = await loadViews(knex, [await requirePlatformRow(knex, platformKey)]);
  if (view === undefined) throw new Error('unreachable');
  return view;
}

/** Spec 4.10: filter by environment; archived platforms only with `archived=true`. */
export async function listPlatforms(
  deps: RegistryDeps,
  filter: { identityEnvironmentKey?: string; archived: boolean },
): Promise<PlatformView[]> {
  const query = deps.db
    .knex(platforms)
    .select(`${platforms}.*`)
    .orderBy(`${platforms}.platform_key`);
  query.where(`${platforms}.status`, filter.archived ? '=' : '<>', 'archived');
  if (filter.identityEnvironmentKey !== undefined) {
    query
      .join(environments, `${environments}.id`, `${platforms}.identity_environment_id`)
      .where(`${environments}.environment_key`, filter.identityEnvironmentKey);
  }
  return loadViews(deps.db.knex, (await query) as PlatformRow[]);
}

// ------------------------------------------------------------------------- rules

async function environmentForBinding(trx: Knex, environmentKey: string): Promise<EnvironmentRow> {
  const environment = (await trx(environments)
    .where({ environment_key: environmentKey })
    .first()) as EnvironmentRow | undefined;
  if (environment === undefined) {
    throw new GatewayError(
      'IDENTITY_ENVIRONMENT_NOT_FOUND',
      `Identity environment ${environmentKey} does not exist.`,
    );
  }
  if (!environment.active) {
    throw new GatewayError(
      'IDENTITY_ENVIRONMENT_INACTIVE',
      `Identity environment ${environmentKey} is inactive.`,
    );
  }
  return environment;
}

function invalid(path: string, message: string): GatewayError {
  return new GatewayError('VALIDATION_ERROR', `${path}: ${message}`, {
    details: { issues: [{ location: 'body', path, message }] },
  });
}

type NormalizedPair = PairInput & { returnUrl: string; callbackUrl: string };

/** Spec 2.1, 2.2: at least one pair, exactly one default, distinct return URL roots. */
function normalizePairs(input: readonly PairInput[]): NormalizedPair[] {
  if (input.length === 0) throw invalid('redirectPairs', 'at least one redirect pair is required');
  const pairs = input.map((pair, index) => ({
    ...pair,
    returnUrl: normalizeReturnUrl(pair.returnUrl, `redirectPairs.${index}.returnUrl`),
    callbackUrl: normalizeCallbackUrl(pair.callbackUrl, `redirectPairs.${index}.callbackUrl`),
  }));
  if (pairs.filter((pair) => pair.isDefault).length !== 1) {
    throw invalid('redirectPairs', 'exactly one redirect pair must be the default');
  }
  const roots = new Set<string>();
  pairs.forEach((pair, index) => {
    if (roots.has(pair.returnUrl)) {
      throw invalid(`redirectPairs.${index}.returnUrl`, 'two pairs have the same return URL');
    }
    roots.add(pair.returnUrl);
  });
  return pairs;
}

/** Spec 2.1: `central` mode needs centralOnboardingEnabled. */
function checkOnboardingMode(mode: OnboardingMode, centralEnabled: boolean): void {
  if (mode === 'central' && !centralEnabled) {
    throw invalid('defaultOnboardingMode', 'central requires centralOnboardingEnabled to be true');
  }
}

function checkOnboardingPath(path: string | null): void {
  if (path !== null && (!path.startsWith('/') || path.startsWith('//') || /[\s\\#]/.test(path))) {
    throw invalid('platformOnboardingPath', 'must be a root-relative path such as /onboarding');
  }
}

/**
 * Issues one BFF key for every callback URL that no key serves yet (pairs sharing a
 * callback share its key, spec 2.2). Returns the new keys with their secrets.
 */
async function issueMissingBffKeys(
  trx: Knex.Transaction,
  context: ChangeContext,
  platform: PlatformRow,
): Promise<IssuedCredential[]> {
  const pairs = (await trx(pairsTable)
    .where({ platform_id: platform.id })
    .orderBy('position')) as PairRow[];
  const keys = (await trx(credentialsTable).where({
    platform_id: platform.id,
    kind: 'bff',
  })) as CredentialRow[];
  const served = new Set(
    keys.map((key) => pairs.find((pair) => pair.id === key.redirect_pair_id)?.callback_url),
  );
  const issued: IssuedCredential[] = [];
  for (const pair of pairs) {
    if (served.has(pair.callback_url)) continue;
    served.add(pair.callback_url);
    const credential = await issueCredential(trx, platform.id, 'bff', pair.id);
    issued.push(credential);
    await appendAuditRecord(trx, {
      kind: 'platform.credential_created',
      ...context,
      target: { type: 'platform', id: platform.id, key: platform.platform_key },
      details: {
        credentialId: credential.id,
        kind: 'bff',
        clientId: credential.clientId,
        redirectPairId: pair.id,
      },
    });
  }
  return issued;
}

function conflictFrom(error: unknown): never {
  if (isUniqueViolation(error) && error.constraint?.includes('platform_key')) {
    const message = 'A platform with this key exists (archived keys stay reserved).';
    throw new GatewayError('CONFLICT', message, {
      details: { issues: [{ location: 'body', path: 'platformKey', message }] },
    });
  }
  throw error;
}

// ------------------------------------------------------------------------- writing

export type PlatformInput = {
  platformKey: string;
  displayName: string;
  identityEnvironmentKey: string | undefined;
  redirectPairs: PairInput[];
  defaultOnboardingMode: OnboardingMode | undefined;
  centralOnboardingEnabled: boolean | undefined;
  platformOnboardingPath: string | undefined;
  metadata: JsonObject;
  adminConsole: boolean | undefined;
};

/** Spec 4.10 create: the platform, its pairs, and one BFF key per callback, secrets once. */
export async function createPlatform(
  deps: RegistryDeps,
  context: ChangeContext,
  input: PlatformInput,
): Promise<{ view: PlatformView; issued: IssuedCredential[] }> {
  const pairs = normalizePairs(input.redirectPairs);
  // Decision (docs/decisions.md): the default onboarding mode is `none`.
  const mode = input.defaultOnboardingMode ?? 'none';
  const centralEnabled = input.centralOnboardingEnabled ?? false;
  checkOnboardingMode(mode, centralEnabled);
  checkOnboardingPath(input.platformOnboardingPath ?? null);
  return deps.db.knex
    .transaction(async (trx) => {
      const environment = await environmentForBinding(
        trx,
        input.identityEnvironmentKey ?? DEPLOYMENT_ENVIRONMENT_KEY,
      );
      requirePublicHttpsUrls(pairs, environment.tier);
      const now = new Date();
      const platform: PlatformRow = {
        id: randomUUID(),
        platform_key: input.platformKey,
        display_name: input.displayName,
        status: 'active',
        central_onboarding_enabled: centralEnabled,
        platform_onboarding_path: input.platformOnboardingPath ?? null,
        default_onboarding_mode: mode,
        identity_environment_id: environment.id,
        metadata: input.metadata,
        admin_console: input.adminConsole ?? false,
        sessions_not_before: null,
        created_at: now,
        updated_at: now,
      };
      await trx(platforms).insert({ ...platform, metadata: JSON.stringify(input.metadata) });
      await trx(pairsTable).insert(
        pairs.map((pair, position) => ({
          id: randomUUID(),
          platform_id: platform.id,
          position,
          label: pair.label,
          return_url: pair.returnUrl,
          callback_url: pair.callbackUrl,
          is_default: pair.isDefault,
          created_at: now,
        })),
      );
      await appendAuditRecord(trx, {
        kind: 'platform.created',
        ...context,
        target: { type: 'platform', id: platform.id, key: platform.platform_key },
        details: {
          identityEnvironmentKey: environment.environment_key,
          adminConsole: platform.admin_console,
        },
      });
      const issued = await issueMissingBffKeys(trx, context, platform);
      return { view: await getPlatform(trx, platform.platform_key), issued };
    })
    .catch(conflictFrom);
}

export type PlatformPatch = {
  displayName?: string;
  identityEnvironmentKey?: string;
  redirectPairs?: PairInput[];
  defaultOnboardingMode?: OnboardingMode;
  centralOnboardingEnabled?: boolean;
  platformOnboardingPath?: string | null;
  metadata?: JsonObject;
  adminConsole?: boolean;
};

/**
 * Spec 4.10 update. Pairs are updated in place by id, otherwise matched by return URL;
 * omitted pairs are deleted with their keys (audited in `platform.updated` as
 * `revokedCredentials`) unless a remaining pair shares the callback, which then keeps the
 * key. A callback left without a key gets a new one, returned once.
 */
export async function updatePlatform(
  deps: RegistryDeps,
  context: ChangeContext,
  platformKey: string,
  patch: PlatformPatch,
): Promise<{ view: PlatformView; issued: IssuedCredential[] }> {
  const pairs = patch.redirectPairs === undefined ? undefined : normalizePairs(patch.redirectPairs);
  return deps.db.knex.transaction(async (trx) => {
    const current = await requirePlatformRow(trx, platformKey, true);
    if (current.status === 'archived') {
      throw new GatewayError('CONFLICT', 'An archived platform cannot change; restore it first.');
    }
    const mode = patch.defaultOnboardingMode ?? current.default_onboarding_mode;
    const centralEnabled = patch.centralOnboardingEnabled ?? current.central_onboarding_enabled;
    checkOnboardingMode(mode, centralEnabled);
    if (patch.platformOnboardingPath !== undefined)
      checkOnboardingPath(patch.platformOnboardingPath);

    const currentEnvironment = (await trx(environments)
      .where({ id: current.identity_environment_id })
      .first()) as EnvironmentRow;
    const environment =
      patch.identityEnvironmentKey === undefined ||
      patch.identityEnvironmentKey === currentEnvironment.environment_key
        ? currentEnvironment
        : await environmentForBinding(trx, patch.identityEnvironmentKey);
    const currentPairs = (await trx(pairsTable)
      .where({ platform_id: current.id })
      .orderBy('position')) as PairRow[];
    requirePublicHttpsUrls(
      pairs ??
        currentPairs.map((pair) => ({
          returnUrl: pair.return_url,
          callbackUrl: pair.callback_url,
        })),
      environment.tier,
    );

    const revokedCredentials: JsonObject[] = [];
    if (pairs !== undefined) {
      revokedCredentials.push(...(await replacePairs(trx, current, currentPairs, pairs)));
    }
    const changes = columnChangesOf(patch);
    if (environment.id !== currentEnvironment.id) changes.identity_environment_id = environment.id;
    await trx(platforms).where({ id: current.id }).update(changes);
    await auditPlatformUpdate(trx, context, current, patch, {
      revokedCredentials,
      environment: { from: currentEnvironment, to: environment },
    });
    const issued = await issueMissingBffKeys(trx, context, current);
    return { view: await getPlatform(trx, platformKey), issued };
  });
}

/** The platform columns a patch sets, with a new `updated_at`. */
function columnChangesOf(patch: PlatformPatch): Record<string, unknown> {
  const changes: Record<string, unknown> = { updated_at: new Date() };
  if (patch.displayName !== undefined) changes.display_name = patch.displayName;
  if (patch.defaultOnboardingMode !== undefined)
    changes.default_onboarding_mode = patch.defaultOnboardingMode;
  if (patch.centralOnboardingEnabled !== undefined)
    changes.central_onboarding_enabled = patch.centralOnboardingEnabled;
  if (patch.platformOnboardingPath !== undefined)
    changes.platform_onboarding_path = patch.platformOnboardingPath;
  if (patch.metadata !== undefined) changes.metadata = JSON.stringify(patch.metadata);
  if (patch.adminConsole !== undefined) changes.admin_console = patch.adminConsole;
  return changes;
}

/**
 * Audits an update as `platform.updated` (the changed fields, the revoked keys, an admin
 * console switch) and a move to another identity environment as
 * `platform.environment_changed`.
 */
async function auditPlatformUpdate(
  trx: Knex.Transaction,
  context: ChangeContext,
  current: PlatformRow,
  patch: PlatformPatch,
  outcome: {
    revokedCredentials: JsonObject[];
    environment: { from: EnvironmentRow; to: EnvironmentRow };
  },
): Promise<void> {
  const target = { type: 'platform' as const, id: current.id, key: current.platform_key };
  await appendAuditRecord(trx, {
    kind: 'platform.updated',
    ...context,
    target,
    details: {
      changed: Object.keys(patch).filter((key) => patch[key as keyof PlatformPatch] !== undefined),
      revokedCredentials: outcome.revokedCredentials,
      ...(patch.adminConsole === undefined || patch.adminConsole === current.admin_console
        ? {}
        : { adminConsole: { from: current.admin_console, to: patch.adminConsole } }),
    },
  });
  const { from, to } = outcome.environment;
  if (to.id !== from.id) {
    await appendAuditRecord(trx, {
      kind: 'platform.environment_changed',
      ...context,
      target,
      details: { from: from.environment_key, to: to.environment_key },
    });
  }
}

async function replacePairs(
  trx: Knex.Transaction,
  platform: PlatformRow,
  currentPairs: PairRow[],
  wanted: NormalizedPair[],
): Promise<JsonObject[]> {
  const matched = wanted.map((pair, index) => {
    if (pair.id !== undefined) {
      const byId = currentPairs.find((existing) => existing.id === pair.id);
      if (byId === undefined)
        throw invalid(`redirectPairs.${index}.id`, 'is not a pair of this platform');
      return byId;
    }
    return currentPairs.find((existing) => existing.return_url === pair.returnUrl);
  });
  const keptIds = new Set(matched.flatMap((pair) => (pair === undefined ? [] : [pair.id])));
  if (keptIds.size !== matched.filter((pair) => pair !== undefined).length) {
    throw invalid('redirectPairs', 'two entries refer to the same existing pair');
  }
  const now = new Date();
  // Park kept pairs' return URLs first so that swapping two URLs cannot collide.
  for (const id of keptIds)
    await trx(pairsTable)
      .where({ id })
      .update({ return_url: `~${id}` });
  const finalPairs: { id: string; callbackUrl: string }[] = [];
  for (const [position, pair] of wanted.entries()) {
    const existing = matched[position];
    const row = {
      position,
      label: pair.label,
      return_url: pair.returnUrl,
      callback_url: pair.callbackUrl,
      is_default: pair.isDefault,
    };
    if (existing !== undefined) {
      await trx(pairsTable).where({ id: existing.id }).update(row);
      finalPairs.push({ id: existing.id, callbackUrl: pair.callbackUrl });
    } else {
      const id = randomUUID();
      await trx(pairsTable).insert({ id, platform_id: platform.id, created_at: now, ...row });
      finalPairs.push({ id, callbackUrl: pair.callbackUrl });
    }
  }
  const removed = currentPairs.filter((pair) => !keptIds.has(pair.id));
  const keys = (await trx(credentialsTable).where({
    platform_id: platform.id,
    kind: 'bff',
  })) as CredentialRow[];
  const revoked: JsonObject[] = [];
  for (const pair of removed) {
    for (const key of keys.filter((candidate) => candidate.redirect_pair_id === pair.id)) {
      const heir = finalPairs.find(
        (candidate) =>
          candidate.callbackUrl === pair.callback_url &&
          !keys.some((other) => other.redirect_pair_id === candidate.id),
      );
      if (heir !== undefined) {
        await trx(credentialsTable).where({ id: key.id }).update({ redirect_pair_id: heir.id });
        key.redirect_pair_id = heir.id;
      } else {
        await trx(credentialsTable).where({ id: key.id }).delete();
        revoked.push({ credentialId: key.id, clientId: key.client_id, redirectPairId: pair.id });
      }
    }
    await trx(pairsTable).where({ id: pair.id }).delete();
  }
  return revoked;
}

async function changeStatus(
  deps: RegistryDeps,
  platformKey: string,
  change: (trx: Knex.Transaction, platform: PlatformRow) => Promise<void>,
): Promise<PlatformView> {
  return deps.db.knex.transaction(async (trx) => {
    await change(trx, await requirePlatformRow(trx, platformKey, true));
    return getPlatform(trx, platformKey);
  });
}

async function setStatus(
  trx: Knex.Transaction,
  context: ChangeContext,
  platform: PlatformRow,
  status: PlatformStatus,
  kind: 'platform.deactivated' | 'platform.activated' | 'platform.archived' | 'platform.restored',
  details: JsonObject = {},
): Promise<void> {
  const now = new Date();
  // Ending its sessions in the transaction of the change: the auth-flow reads this for its
  // session uses (GetPlatformSessionPolicy), so they stay ended after a reactivation too.
  const endsSessions = status === 'inactive' || status === 'archived';
  await trx(platforms)
    .where({ id: platform.id })
    .update({ status, updated_at: now, ...(endsSessions ? { sessions_not_before: now } : {}) });
  await appendAuditRecord(trx, {
    kind,
    ...context,
    target: { type: 'platform', id: platform.id, key: platform.platform_key },
    details,
  });
}

/** Spec 3.4: active → inactive (soft). Idempotent. */
export function deactivatePlatform(
  deps: RegistryDeps,
  context: ChangeContext,
  platformKey: string,
) {
  return changeStatus(deps, platformKey, async (trx, platform) => {
    if (platform.status !== 'active') return;
    await setStatus(trx, context, platform, 'inactive', 'platform.deactivated');
  });
}

/**
 * Spec 3.4: inactive → active, never from archived (PLATFORM_ARCHIVED). An active platform
 * keeps a pair, a BFF key and an active identity environment.
 */
export function activatePlatform(deps: RegistryDeps, context: ChangeContext, platformKey: string) {
  return changeStatus(deps, platformKey, async (trx, platform) => {
    if (platform.status === 'active') return;
    if (platform.status === 'archived') {
      throw new GatewayError('PLATFORM_ARCHIVED', 'The platform is archived; restore it first.');
    }
    const [view] = await loadViews(trx, [platform]);
    if (view === undefined) throw new Error('unreachable');
    if (view.pairs.length === 0) {
      throw new GatewayError(
        'PLATFORM_CALLBACK_NOT_CONFIGURED',
        'The platform has no redirect pair.',
      );
    }
    if (!view.credentials.some((credential) => credential.kind === 'bff')) {
      throw new GatewayError(
        'PLATFORM_CREDENTIALS_NOT_CONFIGURED',
        'The platform has no BFF key; create one before activating it.',
      );
    }
    if (!view.environment.active) {
      throw new GatewayError(
        'IDENTITY_ENVIRONMENT_INACTIVE',
        "The platform's identity environment is inactive.",
      );
    }
    await setStatus(trx, context, platform, 'active', 'platform.activated');
  });
}

/** Spec 3.4: inactive → archived, idempotent; all keys revoked, data kept, key reserved. */
export function archivePlatform(deps: RegistryDeps, context: ChangeContext, platformKey: string) {
  return changeStatus(deps, platformKey, async (trx, platform) => {
    if (platform.status === 'archived') return;
    if (platform.status !== 'inactive') {
      throw new GatewayError(
        'CONFLICT',
        'Only an inactive platform can be archived; deactivate it first.',
      );
    }
    const keys = (await trx(credentialsTable).where({
      platform_id: platform.id,
    })) as CredentialRow[];
    await trx(credentialsTable).where({ platform_id: platform.id }).delete();
    await setStatus(trx, context, platform, 'archived', 'platform.archived', {
      revokedCredentials: keys.map((key) => ({
        credentialId: key.id,
        clientId: key.client_id,
        kind: key.kind,
      })),
    });
  });
}

/** Spec 3.4: archived → inactive, without keys. Idempotent. */
export function restorePlatform(deps: RegistryDeps, context: ChangeContext, platformKey: string) {
  return changeStatus(deps, platformKey, async (trx, platform) => {
    if (platform.status !== 'archived') return;
    await setStatus(trx, context, platform, 'inactive', 'platform.restored');
  });
}

// ---------------------------------------------------------------------- credentials

async function requireCredential(
  trx: Knex,
  platform: PlatformRow,
  credentialId: string,
): Promise<CredentialRow> {
  const credential = (await trx(credentialsTable)
    .where({ id: credentialId, platform_id: platform.id })
    .first()) as CredentialRow | undefined;
  if (credential === undefined) {
    throw new GatewayError('NOT_FOUND', 'The platform has no such credential.');
  }
  return credential;
}

/** Spec 2.3: `bff` one per redirect pair (shared callbacks share one), `backend` at most one. */
export async function createPlatformCredential(
  deps: RegistryDeps,
  context: ChangeContext,
  platformKey: string,
  input: { kind: CredentialKind; redirectPairId: string | undefined },
): Promise<{ view: PlatformView; issued: IssuedCredential[] }> {
  return deps.db.knex.transaction(async (trx) => {
    const platform = await requirePlatformRow(trx, platformKey, true);
    if (platform.status === 'archived') {
      throw new GatewayError('CONFLICT', 'An archived platform has no keys; restore it first.');
    }
    const existing = (await trx(credentialsTable).where({
      platform_id: platform.id,
    })) as CredentialRow[];
    let pairId: string | null = null;
    if (input.kind === 'backend') {
      if (input.redirectPairId !== undefined)
        throw invalid('redirectPairId', 'a backend key has no redirect pair');
      if (existing.some((credential) => credential.kind === 'backend')) {
        throw new GatewayError('CONFLICT', 'The platform already has a backend key.');
      }
    } else {
      if (input.redirectPairId === undefined)
        throw invalid('redirectPairId', 'is required for a bff key');
      const pairs = (await trx(pairsTable).where({ platform_id: platform.id })) as PairRow[];
      const pair = pairs.find((candidate) => candidate.id === input.redirectPairId);
      if (pair === undefined) throw invalid('redirectPairId', 'is not a pair of this platform');
      const servedBy = existing.find(
        (credential) =>
          credential.kind === 'bff' &&
          pairs.find((candidate) => candidate.id === credential.redirect_pair_id)?.callback_url ===
            pair.callback_url,
      );
      if (servedBy !== undefined) {
        throw new GatewayError('CONFLICT', "A BFF key already serves this pair's callback.", {
          details: { credentialId: servedBy.id },
        });
      }
      pairId = pair.id;
    }
    const credential = await issueCredential(trx, platform.id, input.kind, pairId);
    await appendAuditRecord(trx, {
      kind: 'platform.credential_created',
      ...context,
      target: { type: 'platform', id: platform.id, key: platform.platform_key },
      details: {
        credentialId: credential.id,
        kind: input.kind,
        clientId: credential.clientId,
        redirectPairId: pairId,
      },
    });
    return { view: await getPlatform(trx, platformKey), issued: [credential] };
  });
}

export async function rotatePlatformCredential(
  deps: RegistryDeps,
  context: ChangeContext,
  platformKey: string,
  credentialId: string,
  options: { revokePreviousImmediately: boolean; rotateClientId: boolean },
): Promise<{ view: PlatformView; issued: IssuedCredential[] }> {
  return deps.db.knex.transaction(async (trx) => {
    const platform = await requirePlatformRow(trx, platformKey, true);
    const current = await requireCredential(trx, platform, credentialId);
    const credential = await rotateCredential(trx, current, options);
    await appendAuditRecord(trx, {
      kind: 'platform.credential_rotated',
      ...context,
      target: { type: 'platform', id: platform.id, key: platform.platform_key },
      details: {
        credentialId,
        clientId: credential.clientId,
        previousClientId: current.client_id,
        revokePreviousImmediately: options.revokePreviousImmediately,
        rotateClientId: options.rotateClientId,
      },
    });
    return { view: await getPlatform(trx, platformKey), issued: [credential] };
  });
}

export function revokePreviousPlatformCredentialSecret(
  deps: RegistryDeps,
  context: ChangeContext,
  platformKey: string,
  credentialId: string,
): Promise<PlatformView> {
  return changeStatus(deps, platformKey, async (trx, platform) => {
    const credential = await requireCredential(trx, platform, credentialId);
    await trx(credentialsTable)
      .where({ id: credential.id })
      .update({ previous_secret_hash: null, previous_secret_expires_at: null });
    await appendAuditRecord(trx, {
      kind: 'platform.credential_previous_secret_revoked',
      ...context,
      target: { type: 'platform', id: platform.id, key: platform.platform_key },
      details: { credentialId, clientId: credential.client_id },
    });
  });
}

/** Spec 3.4: the last BFF key of an active platform cannot be deleted (409). */
export function deletePlatformCredential(
  deps: RegistryDeps,
  context: ChangeContext,
  platformKey: string,
  credentialId: string,
): Promise<PlatformView> {
  return changeStatus(deps, platformKey, async (trx, platform) => {
    const credential = await requireCredential(trx, platform, credentialId);
    if (credential.kind === 'bff' && platform.status === 'active') {
      const bffKeys = toNumber(
        (
          await trx(credentialsTable)
            .where({ platform_id: platform.id, kind: 'bff' })
            .count({ n: '*' })
        )[0]?.n,
      );
      if (bffKeys <= 1) {
        throw new GatewayError(
          'CONFLICT',
          'The last BFF key of an active platform cannot be deleted.',
        );
      }
    }
    await trx(credentialsTable).where({ id: credential.id }).delete();
    await appendAuditRecord(trx, {
      kind: 'platform.credential_revoked',
      ...context,
      target: { type: 'platform', id: platform.id, key: platform.platform_key },
      details: { credentialId, clientId: credential.client_id, kind: credential.kind },
    });
  });
}

function toNumber(value: unknown): number {
  return typeof value === 'number' ? value : Number(value ?? 0);
}

/** Spec 2.15: origins of active platforms' return URLs (for the CORS allowlist). */
export async function activeReturnUrlOrigins(knex: Knex): Promise<string[]> {
  const rows = (await knex(pairsTable)
    .distinct('return_url')
    .join(platforms, `${platforms}.id`, `${pairsTable}.platform_id`)
    .where(`${platforms}.status`, 'active')) as { return_url: string }[];
  return [...new Set(rows.map((row) => new URL(row.return_url).origin))];
}

// ------------------------------------------------------------------ session policy

export type PlatformSessionPolicy = {
  sessionsAllowed: boolean;
  sessionsNotBeforeMs: number;
  adminConsole: boolean;
};

/**
 * Whether the sessions of this platform's logins may act, and as admin credentials: read by
 * the auth-flow for its session uses (kept until the change feed announces a registry
 * change), one primary-key read. An unknown platform allows nothing.
 */
export async function getPlatformSessionPolicy(
  knex: Knex,
  platformKey: string,
): Promise<PlatformSessionPolicy> {
  const row = (await knex(platforms)
    .select('status', 'admin_console', 'sessions_not_before')
    .where({ platform_key: platformKey })
    .first()) as Pick<PlatformRow, 'status' | 'admin_console' | 'sessions_not_before'> | undefined;
  if (row === undefined)
    return { sessionsAllowed: false, sessionsNotBeforeMs: 0, adminConsole: false };
  return {
    sessionsAllowed: row.status === 'active',
    sessionsNotBeforeMs: row.sessions_not_before === null ? 0 : row.sessions_not_before.getTime(),
    adminConsole: row.admin_console,
  };
}
