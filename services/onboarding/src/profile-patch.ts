import type { Knex } from 'knex';
import type { JsonObject, JsonValue } from '@bufbuild/protobuf';
import { GatewayError } from '@gateway/errors';
import {
  canonicalProfileKeys,
  codePointLength,
  containsHtml,
  isCanonicalProfileKey,
  isOptionFieldType,
  NO_HTML_MESSAGE,
  profileKeyFieldTypes,
  validateFieldValue,
  type CanonicalProfileKey,
  type FieldValueRules,
} from '@gateway/field-rules';
import { deleteUserAvatars } from './avatars.js';
import {
  readProfile,
  writeProfile,
  type ProfileValues,
  type StoredProfile,
} from './profile-store.js';

// Spec 2.5, 4.8 PATCH /v1/profile/me (body and response "not shown"; ours, docs/decisions.md):
// every rule a user's own profile change must pass, in one place.
//
// - A canonical key takes a string, or null (or a blank string) to clear it. Its value must
//   pass the key's own rule (KEY_RULES) and, when an ACTIVE global field definition exists
//   for the key, that definition's fieldType, options and validation as well.
// - `metadata` is merged at the top level: each member replaces the stored one, a null
//   member removes it, `metadata: null` removes every member. `displayName` is plain text of
//   at most 200 characters. The merged object is at most 4 KiB as JSON.
// - `avatarUrl` only takes null: the avatar is removed (stored images deleted). A new avatar
//   comes through the upload (avatars.ts).
// - Anything else is an unknown key. Every issue is reported at once (400 VALIDATION_ERROR,
//   details.issues naming each key); nothing is written unless the whole patch is valid.

/** Largest `metadata`, as UTF-8 JSON. */
export const METADATA_MAX_BYTES = 4096;
/** Longest `metadata.displayName`, in code points (the OIDC `name` is cut to the same). */
export const DISPLAY_NAME_MAX_LENGTH = 200;

/** Length limits (code points) of the free-text keys; the fixed formats need none. */
const MAX_LENGTHS: Partial<Record<CanonicalProfileKey, number>> = {
  firstName: 200,
  middleName: 200,
  lastName: 200,
  nickname: 200,
  gender: 100,
  bio: 2000,
  preferredLocale: 35,
  timezone: 64,
};

/** A well-formed BCP 47 language tag (`en`, `pt-BR`, `zh-Hant-TW`). */
function isLanguageTag(value: string): boolean {
  try {
    return Intl.getCanonicalLocales(value).length === 1;
  } catch {
    return false;
  }
}

/** A time zone the runtime knows (IANA names such as `Europe/Paris`, and `UTC`). */
function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

type KeyRule = {
  /** The key's natural type with its length limit; always applies. */
  rules: FieldValueRules;
  /** The key's own format check, which an active global definition replaces. */
  format?: { check: (value: string) => boolean; message: string };
};

/**
 * The rule of each canonical key without any definition: its natural type (the first of
 * profileKeyFieldTypes). Keys whose natural type is SELECT (gender, preferredLocale,
 * timezone) have no options without a definition, so their free-text type (TEXT) applies.
 */
export const KEY_RULES: Readonly<Record<CanonicalProfileKey, KeyRule>> = Object.fromEntries(
  canonicalProfileKeys.map((key): [CanonicalProfileKey, KeyRule] => {
    const types = profileKeyFieldTypes[key];
    const fieldType = types.find((type) => !isOptionFieldType(type)) ?? 'TEXT';
    const maxLength = MAX_LENGTHS[key];
    const rule: KeyRule = {
      rules: { fieldType, ...(maxLength === undefined ? {} : { validation: { maxLength } }) },
    };
    if (key === 'preferredLocale') {
      rule.format = { check: isLanguageTag, message: 'must be a BCP 47 language tag' };
    } else if (key === 'timezone') {
      rule.format = { check: isTimeZone, message: 'must be an IANA time zone name' };
    }
    return [key, rule];
  }),
) as Record<CanonicalProfileKey, KeyRule>;

export type ProfileIssue = { location: 'body'; path: string; message: string };

/** A validated patch, ready to write. */
export type ProfilePlan = {
  values: Partial<ProfileValues>;
  /** Top-level members to set (`null`: remove); `'clear'` empties metadata. */
  metadata: Record<string, JsonValue> | 'clear' | undefined;
  removeAvatar: boolean;
};

/** Active global field definitions by profile key: what validation needs of them. */
export async function activeGlobalRules(knex: Knex): Promise<Map<string, FieldValueRules>> {
  const rows = (await knex('onboarding.global_field_definitions')
    .where({ active: true })
    .select('profile_field_key', 'definition')) as {
    profile_field_key: string;
    definition: FieldValueRules;
  }[];
  return new Map(
    rows.map((row) => [
      row.profile_field_key,
      {
        fieldType: row.definition.fieldType,
        ...(row.definition.options === undefined ? {} : { options: row.definition.options }),
        ...(row.definition.validation === undefined
          ? {}
          : { validation: row.definition.validation }),
      },
    ]),
  );
}

function checkValue(
  key: CanonicalProfileKey,
  raw: JsonValue,
  definition: FieldValueRules | undefined,
): { ok: true; value: string | null } | { ok: false; message: string } {
  const own = KEY_RULES[key];
  const results = [own.rules, ...(definition === undefined ? [] : [definition])].map((rules) =>
    validateFieldValue(rules, raw),
  );
  for (const result of results) if (!result.ok) return result;
  const first = results[0];
  const value =
    first !== undefined && first.ok && first.value !== null ? String(first.value) : null;
  if (value !== null && definition === undefined && own.format && !own.format.check(value)) {
    return { ok: false, message: own.format.message };
  }
  return { ok: true, value };
}

const isObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function checkMetadata(
  raw: JsonValue,
  issue: (path: string, message: string) => void,
): Record<string, JsonValue> | 'clear' | undefined {
  if (raw === null) return 'clear';
  if (!isObject(raw)) {
    issue('metadata', 'must be an object (or null to remove every member)');
    return undefined;
  }
  const members: Record<string, JsonValue> = { ...raw };
  if (Object.hasOwn(members, 'displayName')) {
    const name = members.displayName;
    if (name !== null && typeof name !== 'string') {
      issue('metadata.displayName', 'must be a string (or null to remove it)');
    } else if (typeof name === 'string') {
      if (name.trim() === '') members.displayName = null;
      else if (containsHtml(name)) issue('metadata.displayName', NO_HTML_MESSAGE);
      else if (codePointLength(name) > DISPLAY_NAME_MAX_LENGTH) {
        issue('metadata.displayName', `must be at most ${DISPLAY_NAME_MAX_LENGTH} characters`);
      }
    }
  }
  return members;
}

/** Validates a patch against the key rules and the active global definitions. */
export function planProfilePatch(
  patch: JsonObject,
  definitions: ReadonlyMap<string, FieldValueRules>,
): ProfilePlan {
  const issues: ProfileIssue[] = [];
  const issue = (path: string, message: string) => issues.push({ location: 'body', path, message });
  const plan: ProfilePlan = { values: {}, metadata: undefined, removeAvatar: false };
  for (const [key, raw] of Object.entries(patch)) {
    if (isCanonicalProfileKey(key)) {
      const result = checkValue(key, raw, definitions.get(key));
      if (result.ok) plan.values[key] = result.value;
      else issue(key, result.message);
    } else if (key === 'metadata') {
      plan.metadata = checkMetadata(raw, issue);
    } else if (key === 'avatarUrl') {
      if (raw === null) plan.removeAvatar = true;
      else {
        issue(
          key,
          'can only be null (removes the avatar); upload a new image through ' +
            'POST /v1/profile/me/avatar/upload-request',
        );
      }
    } else {
      issue(key, 'is not a profile field');
    }
  }
  if (issues.length > 0) throw invalidProfile(issues);
  return plan;
}

function invalidProfile(issues: ProfileIssue[]): GatewayError {
  return new GatewayError('VALIDATION_ERROR', 'Invalid profile.', { details: { issues } });
}

function mergeMetadata(
  stored: Record<string, unknown>,
  change: Record<string, JsonValue> | 'clear',
): Record<string, unknown> {
  if (change === 'clear') return {};
  const merged: Record<string, unknown> = { ...stored };
  for (const [key, value] of Object.entries(change)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/**
 * Spec 4.8 PATCH /v1/profile/me in one transaction: the patch is validated against the
 * active global definitions read in it, the profile row is created if needed and locked (so
 * two concurrent metadata merges cannot lose one another), then written in one statement.
 */
export async function patchProfile(
  knex: Knex,
  userId: string,
  patch: JsonObject,
): Promise<StoredProfile> {
  return knex.transaction(async (trx) => {
    const plan = planProfilePatch(patch, await activeGlobalRules(trx));
    const change: Parameters<typeof writeProfile>[2] = { values: plan.values };
    if (plan.metadata !== undefined) {
      const now = new Date();
      await trx('onboarding.profiles')
        .insert({ user_id: userId, created_at: now, updated_at: now })
        .onConflict('user_id')
        .ignore();
      const row = (await trx('onboarding.profiles')
        .where({ user_id: userId })
        .forUpdate()
        .first('metadata')) as { metadata: Record<string, unknown> } | undefined;
      const metadata = mergeMetadata(row?.metadata ?? {}, plan.metadata);
      if (Buffer.byteLength(JSON.stringify(metadata), 'utf8') > METADATA_MAX_BYTES) {
        throw invalidProfile([
          {
            location: 'body',
            path: 'metadata',
            message: `must be at most ${METADATA_MAX_BYTES} bytes as JSON once merged`,
          },
        ]);
      }
      change.metadata = metadata;
    }
    if (plan.removeAvatar) change.avatarUrl = null;
    const changes = Object.keys(plan.values).length + Number(plan.metadata !== undefined);
    if (changes > 0 || plan.removeAvatar) await writeProfile(trx, userId, change);
    if (plan.removeAvatar) await deleteUserAvatars(trx, userId);
    return readProfile(trx, userId);
  });
}
