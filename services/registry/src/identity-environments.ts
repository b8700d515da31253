import { randomUUID } from 'node:crypto';
import type { JsonObject } from '@bufbuild/protobuf';
import type { Knex } from 'knex';
import { checkIssuer } from '@gateway/config';
import { DecryptionError } from '@gateway/crypto';
import { isUniqueViolation, toCount } from '@gateway/db';
import { GatewayError } from '@gateway/errors';
import { runIdentityEnvironmentChecks, type EnvironmentCheck } from '@gateway/oidc';
import { appendAuditRecord, type AuditActor } from './audit-log.js';
import {
  DEPLOYMENT_ENVIRONMENT_KEY,
  type IdentityTier,
  type RegistryDeps,
} from './registry-deps.js';

export type EnvironmentRow = {
  id: string;
  environment_key: string;
  display_name: string;
  tier: IdentityTier;
  source: 'deployment' | 'database';
  active: boolean;
  issuer: string;
  oidc_client_id: string;
  oidc_client_secret_encrypted: string | null;
  post_logout_redirect_uri: string | null;
  metadata: JsonObject;
  created_at: Date;
  updated_at: Date;
};

export type EnvironmentView = EnvironmentRow & {
  platform_count: number;
  active_platform_count: number;
  platforms?: { platform_key: string; display_name: string; active: boolean }[];
};

export type ChangeContext = { actor: AuditActor; requestId: string };

const table = 'registry.identity_environments';
const tierOrder: Record<IdentityTier, number> = { production: 1, staging: 2, development: 3 };

/**
 * Seeds the deployment row (spec 2.4) from configuration at start: always active, source
 * `deployment`, its issuer, client and post-logout URI taken from the configuration on
 * every start. Its client secret is never stored; it stays in configuration.
 */
export async function seedDeploymentEnvironment(deps: RegistryDeps): Promise<void> {
  const now = new Date();
  const { deployment } = deps;
  await deps.db.knex.transaction(async (trx) => {
    const existing = (await trx(table)
      .where({ environment_key: DEPLOYMENT_ENVIRONMENT_KEY })
      .first()) as EnvironmentRow | undefined;
    const fields = {
      display_name: 'Deployment',
      tier: deployment.tier,
      source: 'deployment',
      active: true,
      issuer: deployment.issuer,
      oidc_client_id: deployment.oidcClientId ?? '',
      oidc_client_secret_encrypted: null,
      post_logout_redirect_uri: deployment.postLogoutRedirectUri ?? null,
      updated_at: now,
    };
    try {
      if (existing === undefined) {
        await trx(table).insert({
          id: randomUUID(),
          environment_key: DEPLOYMENT_ENVIRONMENT_KEY,
          metadata: '{}',
          created_at: now,
          ...fields,
        });
      } else {
        await trx(table).where({ id: existing.id }).update(fields);
      }
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new Error(
          'IDENTITY_ISSUER is already the issuer of a database identity environment; ' +
            'change that environment first.',
          { cause: error },
        );
      }
      throw error;
    }
  });
}

function withCounts(knex: Knex) {
  const platforms = 'registry.platforms';
  return knex(table)
    .select(`${table}.*`)
    .select(
      knex(platforms)
        .count('*')
        .whereRaw(`${platforms}.identity_environment_id = ${table}.id`)
        .as('platform_count'),
      knex(platforms)
        .count('*')
        .whereRaw(`${platforms}.identity_environment_id = ${table}.id`)
        .andWhere(`${platforms}.status`, 'active')
        .as('active_platform_count'),
    );
}

function toView(row: Record<string, unknown>): EnvironmentView {
  return {
    ...(row as EnvironmentRow),
    platform_count: toCount(row.platform_count),
    active_platform_count: toCount(row.active_platform_count),
  };
}

/** Spec 4.11 order: deployment first, then production, staging, development, then key. */
export async function listEnvironments(deps: RegistryDeps): Promise<EnvironmentView[]> {
  const rows = (await withCounts(deps.db.knex)) as Record<string, unknown>[];
  return rows
    .map(toView)
    .sort(
      (a, b) =>
        Number(b.source === 'deployment') - Number(a.source === 'deployment') ||
        tierOrder[a.tier] - tierOrder[b.tier] ||
        a.environment_key.localeCompare(b.environment_key),
    );
}

export async function findEnvironment(
  knex: Knex,
  environmentKey: string,
): Promise<EnvironmentView | undefined> {
  const row = (await withCounts(knex).where(`${table}.environment_key`, environmentKey).first()) as
    Record<string, unknown> | undefined;
  return row === undefined ? undefined : toView(row);
}

async function requireEnvironment(knex: Knex, environmentKey: string): Promise<EnvironmentView> {
  const environment = await findEnvironment(knex, environmentKey);
  if (environment === undefined) {
    throw new GatewayError('NOT_FOUND', `Identity environment ${environmentKey} does not exist.`);
  }
  return environment;
}

export async function getEnvironment(
  deps: RegistryDeps,
  environmentKey: string,
): Promise<EnvironmentView> {
  const environment = await requireEnvironment(deps.db.knex, environmentKey);
  const platforms = (await deps.db
    .knex('registry.platforms')
    .select('platform_key', 'display_name', 'status')
    .where({ identity_environment_id: environment.id })
    .orderBy('platform_key')) as { platform_key: string; display_name: string; status: string }[];
  return {
    ...environment,
    platforms: platforms.map((p) => ({
      platform_key: p.platform_key,
      display_name: p.display_name,
      active: p.status === 'active',
    })),
  };
}

/** Spec 2.4 issuer rules, plus: never the deployment issuer. */
function checkEnvironmentIssuer(deps: RegistryDeps, issuer: string): string {
  const checked = checkIssuer(issuer);
  if (!checked.ok) {
    throw new GatewayError('VALIDATION_ERROR', `issuer ${checked.rule}.`, {
      details: { issues: [{ location: 'body', path: 'issuer', message: checked.rule }] },
    });
  }
  if (checked.value === deps.deployment.issuer) {
    throw new GatewayError('CONFLICT', 'The issuer is the deployment environment issuer.');
  }
  return checked.value;
}

function encryptSecret(deps: RegistryDeps, environmentId: string, secret: string): string {
  if (deps.environmentSecrets === undefined) {
    throw new GatewayError(
      'IDENTITY_ENVIRONMENT_SECRET_KEY_MISSING',
      'A client secret cannot be stored: IDENTITY_ENVIRONMENT_SECRET_KEY is not configured.',
    );
  }
  return deps.environmentSecrets.encrypt(secret, `identity-environment:${environmentId}`);
}

/**
 * The stored client secret of a database environment, for the login flow. Undefined when
 * none is stored; IDENTITY_ENVIRONMENT_SECRET_KEY_MISSING when it cannot be read.
 */
export function decryptEnvironmentSecret(
  deps: RegistryDeps,
  row: EnvironmentRow,
): string | undefined {
  if (row.oidc_client_secret_encrypted === null) return undefined;
  if (deps.environmentSecrets === undefined) {
    throw new GatewayError(
      'IDENTITY_ENVIRONMENT_SECRET_KEY_MISSING',
      'IDENTITY_ENVIRONMENT_SECRET_KEY is not configured.',
    );
  }
  return deps.environmentSecrets.decryptString(
    row.oidc_client_secret_encrypted,
    `identity-environment:${row.id}`,
  );
}

function conflictFrom(error: unknown): never {
  if (isUniqueViolation(error)) {
    const issuer = error.constraint?.includes('issuer') === true;
    const message = `An identity environment with this ${issuer ? 'issuer' : 'environment key'} already exists.`;
    // The field it is about, so a form can show the answer beside it.
    const path = issuer ? 'issuer' : 'environmentKey';
    throw new GatewayError('CONFLICT', message, {
      details: { issues: [{ location: 'body', path, message }] },
    });
  }
  throw error;
}

export async function createEnvironment(
  deps: RegistryDeps,
  context: ChangeContext,
  input: {
    environmentKey: string;
    displayName: string;
    tier: IdentityTier;
    issuer: string;
    oidcClientId: string;
    oidcClientSecret: string | undefined;
    postLogoutRedirectUri: string | undefined;
    metadata: JsonObject;
  },
): Promise<EnvironmentView> {
  const issuer = checkEnvironmentIssuer(deps, input.issuer);
  const id = randomUUID();
  const secret =
    input.oidcClientSecret === undefined ? null : encryptSecret(deps, id, input.oidcClientSecret);
  const now = new Date();
  return deps.db.knex
    .transaction(async (trx) => {
      await trx(table).insert({
        id,
        environment_key: input.environmentKey,
        display_name: input.displayName,
        tier: input.tier,
        source: 'database',
        active: true,
        issuer,
        oidc_client_id: input.oidcClientId,
        oidc_client_secret_encrypted: secret,
        post_logout_redirect_uri: input.postLogoutRedirectUri ?? null,
        metadata: JSON.stringify(input.metadata),
        created_at: now,
        updated_at: now,
      });
      await appendAuditRecord(trx, {
        kind: 'identity_environment.created',
        ...context,
        target: { type: 'identity_environment', id, key: input.environmentKey },
        details: { issuer, tier: input.tier, oidcClientId: input.oidcClientId },
      });
      return requireEnvironment(trx, input.environmentKey);
    })
    .catch(conflictFrom);
}

export type EnvironmentPatch = {
  displayName?: string;
  tier?: IdentityTier;
  issuer?: string;
  oidcClientId?: string;
  /** string sets, null removes, undefined keeps. */
  oidcClientSecret?: string | null;
  postLogoutRedirectUri?: string | null;
  metadata?: JsonObject;
};

export async function updateEnvironment(
  deps: RegistryDeps,
  context: ChangeContext,
  environmentKey: string,
  patch: EnvironmentPatch,
): Promise<EnvironmentView> {
  return deps.db.knex
    .transaction(async (trx) => {
      const current = await requireEnvironment(trx, environmentKey);
      if (current.source === 'deployment') {
        throw new GatewayError(
          'CONFLICT',
          'The deployment environment comes from configuration and cannot be changed here.',
        );
      }
      if (patch.tier !== undefined && patch.tier !== current.tier && current.platform_count > 0) {
        throw new GatewayError(
          'CONFLICT',
          'The tier cannot change while platforms are bound to this environment.',
          { details: { platformCount: current.platform_count } },
        );
      }
      const changes: Record<string, unknown> = { updated_at: new Date() };
      if (patch.displayName !== undefined) changes.display_name = patch.displayName;
      if (patch.tier !== undefined) changes.tier = patch.tier;
      if (patch.issuer !== undefined) changes.issuer = checkEnvironmentIssuer(deps, patch.issuer);
      if (patch.oidcClientId !== undefined) changes.oidc_client_id = patch.oidcClientId;
      if (patch.oidcClientSecret !== undefined) {
        changes.oidc_client_secret_encrypted =
          patch.oidcClientSecret === null
            ? null
            : encryptSecret(deps, current.id, patch.oidcClientSecret);
      }
      if (patch.postLogoutRedirectUri !== undefined) {
        changes.post_logout_redirect_uri = patch.postLogoutRedirectUri;
      }
      if (patch.metadata !== undefined) changes.metadata = JSON.stringify(patch.metadata);
      await trx(table).where({ id: current.id }).update(changes);
      await appendAuditRecord(trx, {
        kind: 'identity_environment.updated',
        ...context,
        target: { type: 'identity_environment', id: current.id, key: environmentKey },
        details: {
          changed: Object.keys(patch).filter(
            (key) => patch[key as keyof EnvironmentPatch] !== undefined,
          ),
        },
      });
      return requireEnvironment(trx, environmentKey);
    })
    .catch(conflictFrom);
}

export async function setEnvironmentActive(
  deps: RegistryDeps,
  context: ChangeContext,
  environmentKey: string,
  active: boolean,
): Promise<EnvironmentView> {
  return deps.db.knex.transaction(async (trx) => {
    const current = await requireEnvironment(trx, environmentKey);
    if (current.source === 'deployment') {
      if (active) return current;
      throw new GatewayError('CONFLICT', 'The deployment environment is always active.');
    }
    if (current.active === active) return current;
    if (!active && current.active_platform_count > 0) {
      throw new GatewayError(
        'CONFLICT',
        'Active platforms use this environment; deactivate or move them first.',
        { details: { activePlatformCount: current.active_platform_count } },
      );
    }
    await trx(table).where({ id: current.id }).update({ active, updated_at: new Date() });
    await appendAuditRecord(trx, {
      kind: active ? 'identity_environment.activated' : 'identity_environment.deactivated',
      ...context,
      target: { type: 'identity_environment', id: current.id, key: environmentKey },
    });
    return requireEnvironment(trx, environmentKey);
  });
}

/** Spec 4.11 validate: read-only checks against the identity provider. */
export async function validateEnvironment(
  deps: RegistryDeps,
  environmentKey: string,
): Promise<{ ok: boolean; checks: EnvironmentCheck[] }> {
  const environment = await requireEnvironment(deps.db.knex, environmentKey);
  const deployment = environment.source === 'deployment';
  const clientSecretConfigured = deployment
    ? deps.deployment.oidcClientSecretConfigured
    : environment.oidc_client_secret_encrypted !== null;
  let secretDecrypts: boolean | null = null;
  if (!deployment && environment.oidc_client_secret_encrypted !== null) {
    try {
      secretDecrypts = decryptEnvironmentSecret(deps, environment) !== undefined;
    } catch (error) {
      if (!(error instanceof DecryptionError) && !(error instanceof GatewayError)) throw error;
      secretDecrypts = false;
    }
  }
  return runIdentityEnvironmentChecks({
    issuer: environment.issuer,
    oidcClientId: environment.oidc_client_id === '' ? null : environment.oidc_client_id,
    clientSecretConfigured,
    secretDecrypts,
    timeoutMs: deps.identityTimeoutMs,
  });
}

export async function resolveIssuer(
  deps: RegistryDeps,
  issuer: string,
): Promise<EnvironmentRow | undefined> {
  return (await deps.db.knex(table).where({ issuer }).first()) as EnvironmentRow | undefined;
}
