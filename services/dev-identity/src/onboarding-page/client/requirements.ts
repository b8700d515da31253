// The requirements the page renders (spec 2.14, 4.9): `GET /v1/onboarding/{platformKey}/
// requirements` or `GET /v1/onboarding/global/requirements`. Read defensively: a response
// this page cannot render is an error, never a half-rendered form.

import { FIELD_TYPES, type FieldType, type FieldValue } from '@gateway/field-rules';

export type RequirementOption = { value: string; label: string };

export type RequirementValidation = {
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  min?: number;
  max?: number;
};

export type RequirementUiConfig = {
  section?: string;
  width?: 'full' | 'half' | 'third';
  helpText?: string;
  component?: string;
};

export type Requirement = {
  scope: 'GLOBAL' | 'PLATFORM';
  platformId: string | null;
  fieldKey: string;
  label: string;
  fieldType: FieldType;
  source: 'PROFILE_FIELD' | 'CUSTOM_FIELD';
  profileFieldKey: string | null;
  description: string | null;
  placeholder: string | null;
  sortOrder: number;
  required: boolean;
  options: RequirementOption[];
  validation: RequirementValidation;
  uiConfig: RequirementUiConfig;
  currentValue: FieldValue;
};

export type Requirements = {
  platformKey?: string;
  platformDisplayName?: string;
  requirementVersion: number;
  /** In render order (global fields first), each field key once. */
  requirements: Requirement[];
};

export class UnreadableRequirements extends Error {
  constructor(problem: string) {
    super(`The gateway sent requirements this page cannot show (${problem}).`);
  }
}

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const optionalString = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;
const nullableString = (value: unknown): string | null =>
  typeof value === 'string' && value !== '' ? value : null;
const optionalNumber = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** The response body of a requirements request, checked. */
export function readRequirements(body: unknown): Requirements {
  if (!isObject(body)) throw new UnreadableRequirements('not an object');
  const version = body.requirementVersion;
  if (typeof version !== 'number' || !Number.isInteger(version)) {
    throw new UnreadableRequirements('no requirementVersion');
  }
  if (!Array.isArray(body.requirements)) throw new UnreadableRequirements('no requirements');
  const seen = new Set<string>();
  const requirements: Requirement[] = [];
  for (const entry of body.requirements) {
    const requirement = readRequirement(entry);
    // Spec 2.14: the gateway merges duplicates of a global field; keep the first regardless.
    if (seen.has(requirement.fieldKey)) continue;
    seen.add(requirement.fieldKey);
    requirements.push(requirement);
  }
  const platformKey = optionalString(body.platformKey);
  const platformDisplayName = optionalString(body.platformDisplayName);
  return {
    ...(platformKey === undefined ? {} : { platformKey }),
    ...(platformDisplayName === undefined ? {} : { platformDisplayName }),
    requirementVersion: version,
    requirements,
  };
}

function readRequirement(entry: unknown): Requirement {
  if (!isObject(entry)) throw new UnreadableRequirements('a requirement is not an object');
  const { fieldKey, label, fieldType } = entry;
  if (typeof fieldKey !== 'string' || fieldKey === '') {
    throw new UnreadableRequirements('a requirement has no fieldKey');
  }
  if (typeof label !== 'string') throw new UnreadableRequirements(`${fieldKey} has no label`);
  if (!(FIELD_TYPES as readonly unknown[]).includes(fieldType)) {
    throw new UnreadableRequirements(`${fieldKey} has an unknown field type`);
  }
  return {
    scope: entry.scope === 'GLOBAL' ? 'GLOBAL' : 'PLATFORM',
    platformId: nullableString(entry.platformId),
    fieldKey,
    label,
    fieldType: fieldType as FieldType,
    source: entry.source === 'PROFILE_FIELD' ? 'PROFILE_FIELD' : 'CUSTOM_FIELD',
    profileFieldKey: nullableString(entry.profileFieldKey),
    description: nullableString(entry.description),
    placeholder: nullableString(entry.placeholder),
    sortOrder: optionalNumber(entry.sortOrder) ?? 0,
    required: entry.required === true,
    options: readOptions(entry.options),
    validation: readValidation(entry.validation),
    uiConfig: readUiConfig(entry.uiConfig),
    currentValue: readValue(entry.currentValue),
  };
}

function readOptions(value: unknown): RequirementOption[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((option: unknown) =>
    isObject(option) && typeof option.value === 'string'
      ? [
          {
            value: option.value,
            label: typeof option.label === 'string' ? option.label : option.value,
          },
        ]
      : [],
  );
}

function readValidation(value: unknown): RequirementValidation {
  if (!isObject(value)) return {};
  const validation: RequirementValidation = {};
  for (const key of ['minLength', 'maxLength', 'min', 'max'] as const) {
    const number = optionalNumber(value[key]);
    if (number !== undefined) validation[key] = number;
  }
  const pattern = optionalString(value.pattern);
  if (pattern !== undefined) validation.pattern = pattern;
  return validation;
}

function readUiConfig(value: unknown): RequirementUiConfig {
  if (!isObject(value)) return {};
  const uiConfig: RequirementUiConfig = {};
  const section = nullableString(value.section);
  if (section !== null) uiConfig.section = section;
  if (value.width === 'full' || value.width === 'half' || value.width === 'third') {
    uiConfig.width = value.width;
  }
  const helpText = nullableString(value.helpText);
  if (helpText !== null) uiConfig.helpText = helpText;
  const component = nullableString(value.component);
  if (component !== null) uiConfig.component = component;
  return uiConfig;
}

function readValue(value: unknown): FieldValue {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return null;
}
