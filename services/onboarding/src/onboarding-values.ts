import type { Knex } from 'knex';
import { GatewayError } from '@gateway/errors';
import {
  isCanonicalProfileKey,
  missingRequiredFields,
  validateFieldValue,
  type CanonicalProfileKey,
  type FieldValue,
  type FieldValueRules,
} from '@gateway/field-rules';
import {
  insertMembership,
  lockMembership,
  setMembershipStatus,
  type Membership,
  type MembershipStatus,
} from './memberships.js';
import {
  readOnboardingState,
  readSchema,
  type ActiveSchema,
  type UserValues,
} from './onboarding-state.js';
import type { StoredDefinition } from './platform-fields.js';
import type { ProfileClaimValues } from './profile-claims.js';
import { KEY_RULES } from './profile-patch.js';
import { writeProfile, type ProfileValues, type StoredProfile } from './profile-store.js';
import type { PlatformSchemaField, SchemaCache } from './schema-cache.js';
import { GLOBAL_SCHEMA, lockSchemaVersions, platformSchema } from './schema-versions.js';

// Spec 2.14, 3.7, 4.9: a user's requirements, values and status for the global profile and
// for one platform. Global fields come first; a platform PROFILE_FIELD that duplicates an
// active global field is merged into it (shown once, saved once to the canonical profile,
// checked against both definitions). PROFILE_FIELD values live in the canonical profile,
// CUSTOM_FIELD values per platform and definition.

/** A definition as the requirements list shows it (spec 2.10 properties). */
export type RequirementDefinition = StoredDefinition & { fieldKey: string };

export type Requirement = {
  scope: 'GLOBAL' | 'PLATFORM';
  definition: RequirementDefinition;
  currentValue: FieldValue;
};

export type OnboardingStatus = {
  globalStatus: 'COMPLETE' | 'INCOMPLETE';
  globalMissingFields: string[];
  /** Undefined for the global scope. */
  platformStatus: MembershipStatus | undefined;
  platformMissingFields: string[];
  requirementVersion: number;
  completedAt: Date | null;
};

/** The profile key a platform field writes to, when it is a PROFILE_FIELD. */
function profileKeyOf(definition: StoredDefinition): CanonicalProfileKey | undefined {
  return definition.source === 'PROFILE_FIELD' && isCanonicalProfileKey(definition.profileFieldKey)
    ? definition.profileFieldKey
    : undefined;
}

function platformValue(field: PlatformSchemaField, values: UserValues): FieldValue {
  const profileKey = profileKeyOf(field.definition);
  if (profileKey !== undefined) return values.profile[profileKey];
  return values.custom.get(field.id) ?? (field.definition.fieldType === 'MULTI_SELECT' ? [] : null);
}

function missingOf(
  schema: ActiveSchema,
  values: UserValues,
): { global: string[]; platform: string[] } {
  const global = missingRequiredFields(schema.global.requirements, values.profile);
  if (schema.platform === undefined) return { global, platform: [] };
  const platformValues = Object.fromEntries(
    schema.platform.fields.map((field) => [field.fieldKey, platformValue(field, values)]),
  );
  return { global, platform: missingRequiredFields(schema.platform.requirements, platformValues) };
}

/** The active fields of the platform (none for the global scope). */
const platformFields = (schema: ActiveSchema): readonly PlatformSchemaField[] =>
  schema.platform?.fields ?? [];

/** The requirementVersion of the scope asked about. */
const versionOf = (schema: ActiveSchema): number => (schema.platform ?? schema.global).version;

/** Platform PROFILE_FIELDs that an active global field of the same profile key absorbs. */
function mergedInto(schema: ActiveSchema, profileKey: string): PlatformSchemaField[] {
  return platformFields(schema).filter((field) => profileKeyOf(field.definition) === profileKey);
}

/** Spec 2.14 requirements: global fields first, then the platform's own (merged) fields. */
export async function getRequirements(
  knex: Knex,
  cache: SchemaCache,
  request: { userId: string; platformKey: string | undefined },
): Promise<{ requirementVersion: number; requirements: Requirement[] }> {
  const { schema, values } = await readOnboardingState(knex, cache, request);
  const globalKeys = new Set(schema.global.fields.map((field) => field.profileFieldKey));
  const requirements: Requirement[] = [
    ...schema.global.fields.map((field): Requirement => {
      const merged = mergedInto(schema, field.profileFieldKey);
      return {
        scope: 'GLOBAL',
        definition: {
          ...field.definition,
          fieldKey: field.profileFieldKey,
          required: field.definition.required || merged.some((m) => m.definition.required),
        },
        currentValue: values.profile[field.profileFieldKey as CanonicalProfileKey],
      };
    }),
    ...platformFields(schema)
      .filter((field) => !globalKeys.has(profileKeyOf(field.definition) ?? ''))
      .map((field): Requirement => ({
        scope: 'PLATFORM',
        definition: { ...field.definition, fieldKey: field.fieldKey },
        currentValue: platformValue(field, values),
      })),
  ];
  return { requirementVersion: versionOf(schema), requirements };
}

/**
 * Spec 3.7 as reported: the stored membership status, except that a COMPLETE membership with
 * a required platform field now empty reads IN_PROGRESS (IN_PROGRESS always comes with
 * missing fields, spec 4.4).
 */
function statusOf(
  membership: Membership | undefined,
  missing: { global: string[]; platform: string[] },
  requirementVersion: number,
  platformScope: boolean,
): OnboardingStatus {
  const stored = membership?.status ?? 'NOT_STARTED';
  const platformStatus =
    stored === 'COMPLETE' && missing.platform.length > 0 ? 'IN_PROGRESS' : stored;
  return {
    globalStatus: missing.global.length > 0 ? 'INCOMPLETE' : 'COMPLETE',
    globalMissingFields: missing.global,
    platformStatus: platformScope ? platformStatus : undefined,
    platformMissingFields: missing.platform,
    requirementVersion,
    completedAt: platformStatus === 'COMPLETE' ? (membership?.completedAt ?? null) : null,
  };
}

/**
 * Read-only evaluation (spec 2.14): what is missing and where the membership stands, with
 * the profile it was evaluated on. One statement (onboarding-state.ts).
 */
export async function evaluateWithProfile(
  knex: Knex,
  cache: SchemaCache,
  request: { userId: string; platformKey: string | undefined },
): Promise<{ status: OnboardingStatus; profile: StoredProfile }> {
  const state = await readOnboardingState(knex, cache, { ...request, membership: true });
  const status = statusOf(
    state.membership,
    missingOf(state.schema, state.values),
    versionOf(state.schema),
    request.platformKey !== undefined,
  );
  return { status, profile: state.profile };
}

/** Read-only evaluation (spec 2.14): what is missing and where the membership stands. */
export async function evaluateStatus(
  knex: Knex,
  cache: SchemaCache,
  request: { userId: string; platformKey: string | undefined },
): Promise<OnboardingStatus> {
  return (await evaluateWithProfile(knex, cache, request)).status;
}

/** Where a submitted key is saved, and every definition its value must satisfy. */
type SaveTarget = {
  rules: FieldValueRules[];
  store: { profileKey: CanonicalProfileKey } | { definitionId: string; fieldType: string };
};

function saveTargets(schema: ActiveSchema): Map<string, SaveTarget> {
  const targets = new Map<string, SaveTarget>();
  const globalByKey = new Map(schema.global.fields.map((field) => [field.profileFieldKey, field]));
  for (const field of schema.global.fields) {
    targets.set(field.profileFieldKey, {
      rules: [
        field.definition,
        ...mergedInto(schema, field.profileFieldKey).map((m) => m.definition),
        // The profile key's own limits (e.g. 200 characters for a name), as PATCH applies.
        KEY_RULES[field.profileFieldKey as CanonicalProfileKey].rules,
      ],
      store: { profileKey: field.profileFieldKey as CanonicalProfileKey },
    });
  }
  for (const field of platformFields(schema)) {
    const profileKey = profileKeyOf(field.definition);
    if (profileKey === undefined) {
      targets.set(field.fieldKey, {
        rules: [field.definition],
        store: { definitionId: field.id, fieldType: field.definition.fieldType },
      });
      continue;
    }
    const global = globalByKey.get(profileKey);
    targets.set(field.fieldKey, {
      rules: [
        field.definition,
        ...(global === undefined ? [] : [global.definition]),
        KEY_RULES[profileKey].rules,
      ],
      store: { profileKey },
    });
  }
  return targets;
}

type ValueIssue = { location: 'body'; path: string; fieldKey: string; message: string };

/** Keys of archived definitions in the scope: saving one means the schema changed (404). */
async function archivedKeys(knex: Knex, platformKey: string | undefined): Promise<Set<string>> {
  const global = (await knex('onboarding.global_field_definitions')
    .where({ active: false })
    .select('profile_field_key')) as { profile_field_key: string }[];
  const platform =
    platformKey === undefined
      ? []
      : ((await knex('onboarding.field_definitions')
          .where({ platform_key: platformKey, active: false })
          .select('field_key')) as { field_key: string }[]);
  return new Set([
    ...global.map((row) => row.profile_field_key),
    ...platform.map((row) => row.field_key),
  ]);
}

const schemaChanged = (
  details: { requirementVersion: number } | { fieldKey: string },
): GatewayError =>
  new GatewayError('NOT_FOUND', 'The onboarding schema changed; load the requirements again.', {
    details,
  });

/**
 * Spec 4.9 PUT values, in one transaction: the schema version is checked (and held) first,
 * every value is validated against every definition it feeds (400 naming each offending
 * field), then PROFILE_FIELD values go to the canonical profile and CUSTOM_FIELD values to
 * the platform. A platform save moves NOT_STARTED to IN_PROGRESS, and COMPLETE to
 * IN_PROGRESS when a required field became empty.
 */
export async function putValues(
  knex: Knex,
  cache: SchemaCache,
  request: {
    userId: string;
    platformKey: string | undefined;
    requirementVersion: number | undefined;
    values: Readonly<Record<string, unknown>>;
  },
): Promise<OnboardingStatus> {
  const { userId, platformKey } = request;
  return knex.transaction(async (trx) => {
    const versions = await holdRequirementVersions(trx, platformKey, request.requirementVersion);
    // The versions are held: the cached schema serves when it is at them.
    const schema = await readSchema(trx, cache, platformKey, {
      global: versions.global,
      platform: versions.platform,
    });
    const writes = await validatedWrites(trx, schema, platformKey, request.values);
    if (Object.keys(writes.profile).length > 0) {
      await writeProfile(trx, userId, { values: writes.profile });
    }
    if (platformKey !== undefined) await saveCustomValues(trx, userId, platformKey, writes.custom);
    return statusAfterSave(trx, cache, schema, { userId, platformKey }, versions.requirement);
  });
}

/**
 * Locks the scope's schema versions for the transaction; a save made against another
 * requirementVersion than the current one is 404 (the schema changed).
 */
async function holdRequirementVersions(
  trx: Knex.Transaction,
  platformKey: string | undefined,
  requested: number | undefined,
): Promise<{ global: number; platform: number | undefined; requirement: number }> {
  const scope = platformKey === undefined ? undefined : platformSchema(platformKey);
  const versions = await lockSchemaVersions(
    trx,
    scope === undefined ? [GLOBAL_SCHEMA] : [GLOBAL_SCHEMA, scope],
  );
  const global = versions.get(GLOBAL_SCHEMA) ?? 0;
  const platform = scope === undefined ? undefined : (versions.get(scope) ?? 0);
  const requirement = platform ?? global;
  if (requested !== undefined && requested !== requirement) {
    throw schemaChanged({ requirementVersion: requirement });
  }
  return { global, platform, requirement };
}

type ValueWrites = {
  profile: Partial<ProfileValues>;
  custom: { definitionId: string; value: FieldValue }[];
};

/**
 * The sent values, each checked against every definition it feeds and sorted into profile
 * and custom writes; 400 naming each offending field, 404 for a field archived meanwhile.
 */
async function validatedWrites(
  trx: Knex.Transaction,
  schema: ActiveSchema,
  platformKey: string | undefined,
  values: Readonly<Record<string, unknown>>,
): Promise<ValueWrites> {
  const targets = saveTargets(schema);
  const issues: ValueIssue[] = [];
  const writes: ValueWrites = { profile: {}, custom: [] };
  // Read only when a key matches no active field: the common save needs no extra query.
  let archived: Set<string> | undefined;
  for (const [fieldKey, raw] of Object.entries(values)) {
    const target = targets.get(fieldKey);
    const issue = (message: string) =>
      issues.push({ location: 'body', path: `values.${fieldKey}`, fieldKey, message });
    if (target === undefined) {
      archived ??= await archivedKeys(trx, platformKey);
      if (archived.has(fieldKey)) throw schemaChanged({ fieldKey });
      issue('is not a field of this onboarding schema');
      continue;
    }
    const problem = addWrite(writes, target, raw);
    if (problem !== undefined) issue(problem);
  }
  if (issues.length > 0) {
    throw new GatewayError('VALIDATION_ERROR', 'Invalid onboarding values.', {
      details: { issues },
    });
  }
  return writes;
}

/** Adds one valid value to `writes`; otherwise answers what is wrong with it. */
function addWrite(writes: ValueWrites, target: SaveTarget, raw: unknown): string | undefined {
  const results = target.rules.map((rules) => validateFieldValue(rules, raw));
  const failed = results.find((result) => !result.ok);
  if (failed !== undefined && !failed.ok) return failed.message;
  const first = results[0];
  const value = first !== undefined && first.ok ? first.value : null;
  if (!('profileKey' in target.store)) {
    writes.custom.push({ definitionId: target.store.definitionId, value });
    return undefined;
  }
  const key = target.store.profileKey;
  const text = value === null ? null : String(value);
  if (key in writes.profile && writes.profile[key] !== text) {
    return `conflicts with another value sent for the profile field ${key}`;
  }
  writes.profile[key] = text;
  return undefined;
}

/**
 * The status after a save. A platform save moves NOT_STARTED to IN_PROGRESS, and COMPLETE to
 * IN_PROGRESS when a required field became empty.
 */
async function statusAfterSave(
  trx: Knex.Transaction,
  cache: SchemaCache,
  schema: ActiveSchema,
  who: { userId: string; platformKey: string | undefined },
  version: number,
): Promise<OnboardingStatus> {
  const { userId, platformKey } = who;
  const after = await readOnboardingState(trx, cache, { userId, platformKey });
  const missing = missingOf(schema, after.values);
  if (platformKey === undefined) {
    return statusOf(undefined, missing, version, false);
  }
  let membership = await lockMembership(trx, userId, platformKey);
  const anyMissing = missing.global.length + missing.platform.length > 0;
  if (membership.status === 'NOT_STARTED' || (membership.status === 'COMPLETE' && anyMissing)) {
    membership = await setMembershipStatus(trx, userId, platformKey, 'IN_PROGRESS');
  }
  return statusOf(membership, missing, version, true);
}

async function saveCustomValues(
  trx: Knex.Transaction,
  userId: string,
  platformKey: string,
  writes: readonly { definitionId: string; value: FieldValue }[],
): Promise<void> {
  const now = new Date();
  for (const write of writes) {
    const empty = write.value === null || (Array.isArray(write.value) && write.value.length === 0);
    if (empty) {
      await trx('onboarding.custom_values')
        .where({ user_id: userId, field_definition_id: write.definitionId })
        .delete();
      continue;
    }
    await trx('onboarding.custom_values')
      .insert({
        user_id: userId,
        field_definition_id: write.definitionId,
        platform_key: platformKey,
        value: JSON.stringify(write.value),
        updated_at: now,
      })
      .onConflict(['user_id', 'field_definition_id'])
      .merge(['value', 'updated_at']);
  }
}

const missingFieldsError = (missingFields: string[]): GatewayError =>
  new GatewayError('CONFLICT', 'Required onboarding fields are missing.', {
    details: { missingFields },
  });

/**
 * Spec 3.7 `complete` (and, with `refuse: false`, the login's own recording, spec 4.2 step
 * 6): COMPLETE when no required field — global or platform — is missing. `complete` refuses
 * with 409 CONFLICT naming the missing fields; a login just leaves the membership as it is
 * (created NOT_STARTED when it did not exist).
 *
 * Every sign-in runs this, so it costs as few statements as it can: one statement reads the
 * state (onboarding-state.ts); nothing is written when the membership already stands where it
 * should. A missing membership is created with its final
 * status in one more statement. Only a move of an existing membership to COMPLETE takes the
 * transaction that locks it and reads the values again under the lock.
 */
export async function completeMembership(
  knex: Knex,
  cache: SchemaCache,
  request: {
    userId: string;
    platformKey: string;
    refuse: boolean;
    /** A sign-in's identity claims, applied by the same statement as the read. */
    claims?: ProfileClaimValues;
  },
): Promise<OnboardingStatus> {
  const { userId, platformKey, claims } = request;
  const state = await readOnboardingState(knex, cache, {
    userId,
    platformKey,
    membership: true,
    ...(claims === undefined ? {} : { claims }),
  });
  const missing = missingOf(state.schema, state.values);
  const anyMissing = [...missing.global, ...missing.platform];
  if (anyMissing.length > 0 && request.refuse) throw missingFieldsError(anyMissing);
  const version = versionOf(state.schema);
  const current = state.membership;
  if (current === undefined) {
    const status = anyMissing.length > 0 ? 'NOT_STARTED' : 'COMPLETE';
    const created = await insertMembership(knex, userId, platformKey, status);
    if (created !== undefined) return statusOf(created, missing, version, true);
  } else if (anyMissing.length > 0 || current.status === 'COMPLETE') {
    return statusOf(current, missing, version, true);
  }
  return completeLocked(knex, cache, request);
}

/** The membership locked, then the values read again under the lock, then recorded. */
async function completeLocked(
  knex: Knex,
  cache: SchemaCache,
  request: { userId: string; platformKey: string; refuse: boolean },
): Promise<OnboardingStatus> {
  const { userId, platformKey } = request;
  return knex.transaction(async (trx) => {
    let membership = await lockMembership(trx, userId, platformKey);
    const state = await readOnboardingState(trx, cache, { userId, platformKey });
    const missing = missingOf(state.schema, state.values);
    const anyMissing = [...missing.global, ...missing.platform];
    if (anyMissing.length > 0 && request.refuse) throw missingFieldsError(anyMissing);
    if (anyMissing.length === 0 && membership.status !== 'COMPLETE') {
      membership = await setMembershipStatus(trx, userId, platformKey, 'COMPLETE');
    }
    return statusOf(membership, missing, versionOf(state.schema), true);
  });
}
