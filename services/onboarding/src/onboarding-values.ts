import type { Knex } from 'knex';
import { GatewayError } from '@gateway/errors';
import {
  isCanonicalProfileKey,
  missingRequiredFields,
  sortFieldDefinitions,
  validateFieldValue,
  type CanonicalProfileKey,
  type FieldValue,
  type FieldValueRules,
} from '@gateway/field-rules';
import { listGlobalFields, type GlobalFieldView } from './global-fields.js';
import {
  lockMembership,
  readMembership,
  setMembershipStatus,
  type Membership,
  type MembershipStatus,
} from './memberships.js';
import type { StoredDefinition } from './platform-fields.js';
import { KEY_RULES } from './profile-patch.js';
import { readProfile, writeProfile, type ProfileValues } from './profile-store.js';
import {
  GLOBAL_SCHEMA,
  lockSchemaVersion,
  platformSchema,
  schemaVersions,
} from './schema-versions.js';

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

type PlatformFieldRow = {
  id: string;
  field_key: string;
  definition: StoredDefinition;
  active: boolean;
  created_at: Date;
};

type PlatformSchemaField = {
  id: string;
  fieldKey: string;
  definition: StoredDefinition;
  createdAt: Date;
};

/** The schema a user is evaluated against: active fields only, in render order. */
type ActiveSchema = {
  global: GlobalFieldView[];
  platform: PlatformSchemaField[];
};

async function activePlatformFields(
  knex: Knex,
  platformKey: string,
): Promise<PlatformSchemaField[]> {
  const rows = (await knex('onboarding.field_definitions').where({
    platform_key: platformKey,
    active: true,
  })) as PlatformFieldRow[];
  return sortFieldDefinitions(
    rows.map((row) => ({
      id: row.id,
      fieldKey: row.field_key,
      definition: row.definition,
      createdAt: new Date(row.created_at),
      sortOrder: row.definition.sortOrder,
    })),
  ).map(({ sortOrder: _sortOrder, ...field }) => field);
}

/**
 * Two reads side by side on the pool, one after the other inside a transaction: a
 * transaction is one connection, which runs one query at a time.
 */
async function bothOf<A, B>(knex: Knex, a: () => Promise<A>, b: () => Promise<B>): Promise<[A, B]> {
  if (knex.isTransaction === true) return [await a(), await b()];
  return Promise.all([a(), b()]);
}

async function loadSchema(knex: Knex, platformKey: string | undefined): Promise<ActiveSchema> {
  const [global, platform] = await bothOf(
    knex,
    () => listGlobalFields(knex, { activeOnly: true }),
    () =>
      platformKey === undefined ? Promise.resolve([]) : activePlatformFields(knex, platformKey),
  );
  return { global, platform };
}

/** The profile key a platform field writes to, when it is a PROFILE_FIELD. */
function profileKeyOf(definition: StoredDefinition): CanonicalProfileKey | undefined {
  return definition.source === 'PROFILE_FIELD' && isCanonicalProfileKey(definition.profileFieldKey)
    ? definition.profileFieldKey
    : undefined;
}

/** The user's stored values: the canonical profile and the platform's custom values. */
type UserValues = { profile: ProfileValues; custom: Map<string, FieldValue> };

async function loadValues(
  knex: Knex,
  userId: string,
  platformKey: string | undefined,
): Promise<UserValues> {
  const [profile, rows] = await bothOf(
    knex,
    () => readProfile(knex, userId),
    () =>
      platformKey === undefined
        ? Promise.resolve([])
        : (knex('onboarding.custom_values').where({
            user_id: userId,
            platform_key: platformKey,
          }) as Promise<{ field_definition_id: string; value: FieldValue }[]>),
  );
  return {
    profile: profile.values,
    custom: new Map(rows.map((row) => [row.field_definition_id, row.value])),
  };
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
  const global = missingRequiredFields(
    schema.global.map((field) => ({ ...field.definition, fieldKey: field.profileFieldKey })),
    values.profile,
  );
  const platformValues = Object.fromEntries(
    schema.platform.map((field) => [field.fieldKey, platformValue(field, values)]),
  );
  const platform = missingRequiredFields(
    schema.platform.map((field) => ({ ...field.definition, fieldKey: field.fieldKey })),
    platformValues,
  );
  return { global, platform };
}

/** Platform PROFILE_FIELDs that an active global field of the same profile key absorbs. */
function mergedInto(schema: ActiveSchema, profileKey: string): PlatformSchemaField[] {
  return schema.platform.filter((field) => profileKeyOf(field.definition) === profileKey);
}

/** Spec 2.14 requirements: global fields first, then the platform's own (merged) fields. */
export async function getRequirements(
  knex: Knex,
  request: { userId: string; platformKey: string | undefined },
): Promise<{ requirementVersion: number; requirements: Requirement[] }> {
  const scope =
    request.platformKey === undefined ? GLOBAL_SCHEMA : platformSchema(request.platformKey);
  const [schema, values, versions] = await Promise.all([
    loadSchema(knex, request.platformKey),
    loadValues(knex, request.userId, request.platformKey),
    schemaVersions(knex, [scope]),
  ]);
  const globalKeys = new Set(schema.global.map((field) => field.profileFieldKey));
  const requirements: Requirement[] = [
    ...schema.global.map((field): Requirement => {
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
    ...schema.platform
      .filter((field) => !globalKeys.has(profileKeyOf(field.definition) ?? ''))
      .map((field): Requirement => ({
        scope: 'PLATFORM',
        definition: { ...field.definition, fieldKey: field.fieldKey },
        currentValue: platformValue(field, values),
      })),
  ];
  return { requirementVersion: versions.get(scope) ?? 0, requirements };
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

/** Read-only evaluation (spec 2.14): what is missing and where the membership stands. */
export async function evaluateStatus(
  knex: Knex,
  request: { userId: string; platformKey: string | undefined },
): Promise<OnboardingStatus> {
  const { userId, platformKey } = request;
  const scope = platformKey === undefined ? GLOBAL_SCHEMA : platformSchema(platformKey);
  const [schema, values, membership, versions] = await Promise.all([
    loadSchema(knex, platformKey),
    loadValues(knex, userId, platformKey),
    platformKey === undefined
      ? Promise.resolve(undefined)
      : readMembership(knex, userId, platformKey),
    schemaVersions(knex, [scope]),
  ]);
  return statusOf(
    membership,
    missingOf(schema, values),
    versions.get(scope) ?? 0,
    platformKey !== undefined,
  );
}

/** Where a submitted key is saved, and every definition its value must satisfy. */
type SaveTarget = {
  rules: FieldValueRules[];
  store: { profileKey: CanonicalProfileKey } | { definitionId: string; fieldType: string };
};

function saveTargets(schema: ActiveSchema): Map<string, SaveTarget> {
  const targets = new Map<string, SaveTarget>();
  const globalByKey = new Map(schema.global.map((field) => [field.profileFieldKey, field]));
  for (const field of schema.global) {
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
  for (const field of schema.platform) {
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
  request: {
    userId: string;
    platformKey: string | undefined;
    requirementVersion: number | undefined;
    values: Readonly<Record<string, unknown>>;
  },
): Promise<OnboardingStatus> {
  const { userId, platformKey } = request;
  return knex.transaction(async (trx) => {
    const globalVersion = await lockSchemaVersion(trx, GLOBAL_SCHEMA);
    const version =
      platformKey === undefined
        ? globalVersion
        : await lockSchemaVersion(trx, platformSchema(platformKey));
    if (request.requirementVersion !== undefined && request.requirementVersion !== version) {
      throw schemaChanged({ requirementVersion: version });
    }
    const schema = await loadSchema(trx, platformKey);
    const targets = saveTargets(schema);
    const issues: ValueIssue[] = [];
    const profileWrites: Partial<ProfileValues> = {};
    const customWrites: { definitionId: string; value: FieldValue }[] = [];
    // Read only when a key matches no active field: the common save needs no extra query.
    let archived: Set<string> | undefined;
    for (const [fieldKey, raw] of Object.entries(request.values)) {
      const target = targets.get(fieldKey);
      const issue = (message: string) =>
        issues.push({ location: 'body', path: `values.${fieldKey}`, fieldKey, message });
      if (target === undefined) {
        archived ??= await archivedKeys(trx, platformKey);
        if (archived.has(fieldKey)) throw schemaChanged({ fieldKey });
        issue('is not a field of this onboarding schema');
        continue;
      }
      const results = target.rules.map((rules) => validateFieldValue(rules, raw));
      const failed = results.find((result) => !result.ok);
      if (failed !== undefined && !failed.ok) {
        issue(failed.message);
        continue;
      }
      const first = results[0];
      const value = first !== undefined && first.ok ? first.value : null;
      if ('profileKey' in target.store) {
        const key = target.store.profileKey;
        const text = value === null ? null : String(value);
        if (key in profileWrites && profileWrites[key] !== text) {
          issue(`conflicts with another value sent for the profile field ${key}`);
          continue;
        }
        profileWrites[key] = text;
      } else {
        customWrites.push({ definitionId: target.store.definitionId, value });
      }
    }
    if (issues.length > 0) {
      throw new GatewayError('VALIDATION_ERROR', 'Invalid onboarding values.', {
        details: { issues },
      });
    }
    if (Object.keys(profileWrites).length > 0) {
      await writeProfile(trx, userId, { values: profileWrites });
    }
    if (platformKey !== undefined) await saveCustomValues(trx, userId, platformKey, customWrites);

    const missing = missingOf(schema, await loadValues(trx, userId, platformKey));
    if (platformKey === undefined) {
      return statusOf(undefined, missing, version, false);
    }
    let membership = await lockMembership(trx, userId, platformKey);
    const anyMissing = missing.global.length + missing.platform.length > 0;
    if (membership.status === 'NOT_STARTED' || (membership.status === 'COMPLETE' && anyMissing)) {
      membership = await setMembershipStatus(trx, userId, platformKey, 'IN_PROGRESS');
    }
    return statusOf(membership, missing, version, true);
  });
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

/**
 * Spec 3.7 `complete` (and, with `refuse: false`, the login's own recording): COMPLETE when
 * no required field — global or platform — is missing. `complete` refuses with 409 CONFLICT
 * naming the missing fields; a login just leaves the membership as it is.
 */
export async function completeMembership(
  knex: Knex,
  request: { userId: string; platformKey: string; refuse: boolean },
): Promise<OnboardingStatus> {
  const { userId, platformKey } = request;
  return knex.transaction(async (trx) => {
    let membership = await lockMembership(trx, userId, platformKey);
    const schema = await loadSchema(trx, platformKey);
    const missing = missingOf(schema, await loadValues(trx, userId, platformKey));
    const versions = await schemaVersions(trx, [platformSchema(platformKey)]);
    const anyMissing = [...missing.global, ...missing.platform];
    if (anyMissing.length > 0 && request.refuse) {
      throw new GatewayError('CONFLICT', 'Required onboarding fields are missing.', {
        details: { missingFields: anyMissing },
      });
    }
    if (anyMissing.length === 0 && membership.status !== 'COMPLETE') {
      membership = await setMembershipStatus(trx, userId, platformKey, 'COMPLETE');
    }
    return statusOf(membership, missing, versions.get(platformSchema(platformKey)) ?? 0, true);
  });
}
