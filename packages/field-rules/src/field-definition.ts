// Schemas for onboarding field definitions (spec 2.10-2.13, 4.13): the create and PATCH
// bodies of platform fields, the global field body, and the cross-property rules shared by
// all of them (checkFieldDefinition).

import { z } from 'zod';
import { FIELD_SOURCES, FIELD_TYPES, isOptionFieldType, isStringFieldType } from './field-types.js';
import type { FieldSource, FieldType } from './field-types.js';
import {
  canonicalProfileKeys,
  isCanonicalProfileKey,
  profileKeyAllowsType,
  profileKeyFieldTypes,
} from './profile-keys.js';
import type { CanonicalProfileKey } from './profile-keys.js';
import {
  codePointLength,
  containsHtml,
  MAX_OPTIONS,
  NO_HTML_MESSAGE,
  TEXT_LIMITS,
} from './plain-text.js';
import { checkSafePattern } from './safe-pattern.js';
import { storedText } from './stored-text.js';

export const FIELD_KEY_PATTERN = /^[A-Za-z][A-Za-z0-9_]{1,63}$/;

/** Display text: trimmed, at most `max` code points, no HTML. */
const plainText = (max: number) =>
  storedText()
    .trim()
    .refine((text) => codePointLength(text) <= max, `must be at most ${max} characters`)
    .refine((text) => !containsHtml(text), NO_HTML_MESSAGE);

/** Required display text: as plainText, and not blank. */
const requiredText = (max: number) =>
  plainText(max).refine((text) => text !== '', 'must not be empty');

/** Optional display text: `null`, `''` and blank all mean "none" and come out as `null`. */
const clearableText = (max: number) =>
  z.union([z.null(), plainText(max)]).transform((text) => (text === '' ? null : text));

export const fieldKeySchema = z
  .string()
  .regex(FIELD_KEY_PATTERN, 'must match ^[A-Za-z][A-Za-z0-9_]{1,63}$');

export const fieldTypeSchema = z.enum(FIELD_TYPES, {
  error: `must be one of ${FIELD_TYPES.join(', ')}`,
});

export const fieldSourceSchema = z.enum(FIELD_SOURCES, {
  error: `must be one of ${FIELD_SOURCES.join(', ')}`,
});

export const canonicalProfileKeySchema = z.enum(canonicalProfileKeys, {
  error: `must be one of the canonical profile keys: ${canonicalProfileKeys.join(', ')}`,
});

/** `profileFieldKey` as a property: a canonical key, or `null` / `''` (both come out `null`). */
const profileFieldKeyProperty = z
  .union([z.null(), z.string()], { error: 'must be a canonical profile key, empty or null' })
  .refine(
    (key) => key === null || key === '' || isCanonicalProfileKey(key),
    `must be one of the canonical profile keys: ${canonicalProfileKeys.join(', ')}`,
  )
  .transform((key): CanonicalProfileKey | null => (isCanonicalProfileKey(key) ? key : null));

/**
 * One option. Values are compared exactly with submitted values, and clients trim text
 * (spec 4.9), so a value must be non-empty and have no surrounding whitespace.
 */
export const fieldOptionSchema = z.strictObject({
  value: storedText()
    .refine((value) => value.trim() === value, 'must not start or end with whitespace')
    .refine((value) => value !== '', 'must not be empty')
    .refine(
      (value) => codePointLength(value) <= TEXT_LIMITS.optionValue,
      `must be at most ${TEXT_LIMITS.optionValue} characters`,
    )
    .refine((value) => !containsHtml(value), NO_HTML_MESSAGE),
  label: requiredText(TEXT_LIMITS.optionLabel),
});
export type FieldOption = z.output<typeof fieldOptionSchema>;

export const fieldOptionsSchema = z
  .array(fieldOptionSchema)
  .max(MAX_OPTIONS, `must have at most ${MAX_OPTIONS} options`)
  .superRefine((options, ctx) => {
    const seen = new Set<string>();
    options.forEach((option, index) => {
      if (seen.has(option.value)) {
        ctx.addIssue({
          code: 'custom',
          path: [index, 'value'],
          message: 'must be unique among the options',
        });
      }
      seen.add(option.value);
    });
  });

const nonNegativeInteger = z
  .number()
  .int('must be an integer')
  .min(0, 'must be an integer >= 0')
  .max(Number.MAX_SAFE_INTEGER);
const positiveInteger = z
  .number()
  .int('must be an integer')
  .min(1, 'must be an integer >= 1')
  .max(Number.MAX_SAFE_INTEGER);

/**
 * The validation object (spec 2.12) on its own: known keys only, each well-formed, and a
 * pattern that compiles with `u` and passes the safe-pattern check. Which keys a field type
 * accepts, and the min/max orderings, are checked by checkFieldDefinition.
 */
export const fieldValidationSchema = z.strictObject({
  minLength: nonNegativeInteger.optional(),
  maxLength: positiveInteger.optional(),
  pattern: storedText()
    .superRefine((pattern, ctx) => {
      const check = checkSafePattern(pattern);
      if (!check.ok) ctx.addIssue({ code: 'custom', message: check.message });
    })
    .optional(),
  min: z.number().optional(),
  max: z.number().optional(),
});
export type FieldValidation = z.output<typeof fieldValidationSchema>;

export const UI_WIDTHS = ['full', 'half', 'third'] as const;

/** The uiConfig object (spec 2.13): display hints only, known keys only, no HTML. */
export const fieldUiConfigSchema = z.strictObject({
  section: plainText(TEXT_LIMITS.section).optional(),
  width: z.enum(UI_WIDTHS, { error: `must be one of ${UI_WIDTHS.join(', ')}` }).optional(),
  helpText: plainText(TEXT_LIMITS.helpText).optional(),
  component: plainText(TEXT_LIMITS.component).optional(),
});
export type FieldUiConfig = z.output<typeof fieldUiConfigSchema>;

/** The properties the cross-property rules look at. */
export type FieldRuleProperties = {
  fieldType: FieldType;
  source: FieldSource;
  profileFieldKey: string | null;
  options: readonly FieldOption[];
  validation: FieldValidation;
};

export type FieldDefinitionIssue = { path: (string | number)[]; message: string };

const STRING_VALIDATION_KEYS = ['minLength', 'maxLength', 'pattern'] as const;
const NUMBER_VALIDATION_KEYS = ['min', 'max'] as const;

/**
 * The rules that tie properties together (spec 2.10-2.12). Run on a create body and again on
 * the merged result of a PATCH, since a PATCH may change one side of a rule only.
 */
export function checkFieldDefinition(definition: FieldRuleProperties): FieldDefinitionIssue[] {
  const issues: FieldDefinitionIssue[] = [];
  const { fieldType, source, profileFieldKey, options, validation } = definition;

  if (source === 'PROFILE_FIELD') {
    if (profileFieldKey === null || profileFieldKey === '') {
      issues.push({
        path: ['profileFieldKey'],
        message: 'is required when source is PROFILE_FIELD',
      });
    } else if (!isCanonicalProfileKey(profileFieldKey)) {
      issues.push({
        path: ['profileFieldKey'],
        message: `must be one of the canonical profile keys: ${canonicalProfileKeys.join(', ')}`,
      });
    } else if (!profileKeyAllowsType(profileFieldKey, fieldType)) {
      issues.push({
        path: ['fieldType'],
        message: `must be one the profile field ${profileFieldKey} can hold: ${profileKeyFieldTypes[profileFieldKey].join(', ')}`,
      });
    }
  } else if (profileFieldKey !== null && profileFieldKey !== '') {
    issues.push({ path: ['profileFieldKey'], message: 'must be empty or null for CUSTOM_FIELD' });
  }

  if (isOptionFieldType(fieldType)) {
    if (options.length === 0) {
      issues.push({ path: ['options'], message: `must not be empty for ${fieldType}` });
    }
  } else if (options.length > 0) {
    issues.push({ path: ['options'], message: `must be [] for ${fieldType}` });
  }

  const allowed: readonly string[] = isStringFieldType(fieldType)
    ? STRING_VALIDATION_KEYS
    : fieldType === 'NUMBER'
      ? NUMBER_VALIDATION_KEYS
      : [];
  for (const key of Object.keys(validation) as (keyof FieldValidation)[]) {
    if (validation[key] !== undefined && !allowed.includes(key)) {
      issues.push({ path: ['validation', key], message: `does not apply to ${fieldType}` });
    }
  }
  const { minLength, maxLength, min, max } = validation;
  if (minLength !== undefined && maxLength !== undefined && minLength > maxLength) {
    issues.push({ path: ['validation', 'minLength'], message: 'must not exceed maxLength' });
  }
  if (min !== undefined && max !== undefined && min > max) {
    issues.push({ path: ['validation', 'min'], message: 'must not exceed max' });
  }
  return issues;
}

function addIssues(issues: FieldDefinitionIssue[], ctx: z.RefinementCtx): void {
  for (const issue of issues) {
    ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  }
}

const sortOrderSchema = z
  .number()
  .int('must be an integer')
  .min(Number.MIN_SAFE_INTEGER)
  .max(Number.MAX_SAFE_INTEGER);

/** The descriptive properties shared by platform and global fields, as PATCH sees them. */
const descriptiveProperties = {
  label: requiredText(TEXT_LIMITS.label),
  fieldType: fieldTypeSchema,
  description: clearableText(TEXT_LIMITS.description),
  placeholder: clearableText(TEXT_LIMITS.placeholder),
  sortOrder: sortOrderSchema,
  required: z.boolean(),
  options: fieldOptionsSchema,
  validation: fieldValidationSchema,
  uiConfig: fieldUiConfigSchema,
};

/** The same properties with the defaults of a create body. */
const descriptiveCreateProperties = {
  label: descriptiveProperties.label,
  fieldType: descriptiveProperties.fieldType,
  description: descriptiveProperties.description.default(null),
  placeholder: descriptiveProperties.placeholder.default(null),
  sortOrder: sortOrderSchema.default(0),
  required: z.boolean().default(false),
  options: fieldOptionsSchema.default([]),
  validation: fieldValidationSchema.default({}),
  uiConfig: fieldUiConfigSchema.default({}),
};

/** Create body of a platform field (`POST /v1/platforms/{platformKey}/onboarding/fields`). */
export const fieldDefinitionSchema = z
  .strictObject({
    fieldKey: fieldKeySchema,
    source: fieldSourceSchema,
    profileFieldKey: profileFieldKeyProperty.default(null),
    ...descriptiveCreateProperties,
  })
  .superRefine((definition, ctx) => addIssues(checkFieldDefinition(definition), ctx));
export type FieldDefinition = z.output<typeof fieldDefinitionSchema>;

const atLeastOneProperty = (patch: object): boolean =>
  Object.values(patch).some((value) => value !== undefined);
const AT_LEAST_ONE = 'must change at least one property';

/**
 * PATCH body of a platform field: every mutable property optional (`fieldKey` is immutable
 * and rejected as an unknown key), plus `active`. Objects (`options`, `validation`,
 * `uiConfig`) replace the stored value as a whole. The cross-property rules are checked on
 * the merged result: see mergeFieldDefinitionPatch.
 */
export const fieldDefinitionPatchSchema = z
  .strictObject({
    source: fieldSourceSchema.optional(),
    profileFieldKey: profileFieldKeyProperty.optional(),
    label: descriptiveProperties.label.optional(),
    fieldType: descriptiveProperties.fieldType.optional(),
    description: descriptiveProperties.description.optional(),
    placeholder: descriptiveProperties.placeholder.optional(),
    sortOrder: descriptiveProperties.sortOrder.optional(),
    required: descriptiveProperties.required.optional(),
    options: descriptiveProperties.options.optional(),
    validation: descriptiveProperties.validation.optional(),
    uiConfig: descriptiveProperties.uiConfig.optional(),
    active: z.boolean().optional(),
  })
  .refine(atLeastOneProperty, AT_LEAST_ONE);
export type FieldDefinitionPatch = z.output<typeof fieldDefinitionPatchSchema>;

/** Create body of a global field (`POST /v1/admin/onboarding/global-fields`). */
export const globalFieldDefinitionSchema = z
  .strictObject({
    profileFieldKey: canonicalProfileKeySchema,
    /** Implied; accepted when sent, but only as PROFILE_FIELD. */
    source: z.literal('PROFILE_FIELD', { error: 'must be PROFILE_FIELD' }).optional(),
    ...descriptiveCreateProperties,
  })
  .superRefine((definition, ctx) =>
    addIssues(checkFieldDefinition({ ...definition, source: 'PROFILE_FIELD' }), ctx),
  )
  .transform((definition) => ({
    ...definition,
    source: 'PROFILE_FIELD' as const,
    /** Global fields appear in `missingFields` under their profile key. */
    fieldKey: definition.profileFieldKey,
  }));
export type GlobalFieldDefinition = z.output<typeof globalFieldDefinitionSchema>;

/** PATCH body of a global field: descriptive properties and `active`; not the key or source. */
export const globalFieldDefinitionPatchSchema = z
  .strictObject({
    label: descriptiveProperties.label.optional(),
    fieldType: descriptiveProperties.fieldType.optional(),
    description: descriptiveProperties.description.optional(),
    placeholder: descriptiveProperties.placeholder.optional(),
    sortOrder: descriptiveProperties.sortOrder.optional(),
    required: descriptiveProperties.required.optional(),
    options: descriptiveProperties.options.optional(),
    validation: descriptiveProperties.validation.optional(),
    uiConfig: descriptiveProperties.uiConfig.optional(),
    active: z.boolean().optional(),
  })
  .refine(atLeastOneProperty, AT_LEAST_ONE);
export type GlobalFieldDefinitionPatch = z.output<typeof globalFieldDefinitionPatchSchema>;

export type MergeResult<T> =
  { ok: true; definition: T } | { ok: false; issues: FieldDefinitionIssue[] };

/**
 * Applies a parsed PATCH (platform or global) to the stored definition and re-checks the
 * cross-property rules on the result. Properties absent from the patch are kept.
 */
export function mergeFieldDefinitionPatch<T extends FieldRuleProperties>(
  stored: T,
  patch: FieldDefinitionPatch | GlobalFieldDefinitionPatch,
): MergeResult<T> {
  const merged = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    if (value !== undefined) Object.assign(merged, { [key]: value });
  }
  const issues = checkFieldDefinition(merged);
  return issues.length === 0 ? { ok: true, definition: merged } : { ok: false, issues };
}
