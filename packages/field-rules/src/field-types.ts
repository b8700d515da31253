// Field types and sources of onboarding field definitions (spec 2.10, 2.11).

export const FIELD_TYPES = [
  'TEXT',
  'TEXTAREA',
  'NUMBER',
  'BOOLEAN',
  'DATE',
  'SELECT',
  'MULTI_SELECT',
  'COUNTRY',
  'PHONE',
  'EMAIL',
  'URL',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const FIELD_SOURCES = ['PROFILE_FIELD', 'CUSTOM_FIELD'] as const;
export type FieldSource = (typeof FIELD_SOURCES)[number];

/** The types that take `options` (and require at least one). */
export const OPTION_FIELD_TYPES: readonly FieldType[] = ['SELECT', 'MULTI_SELECT'];

/**
 * The "string types" of spec 2.12: free string values that `minLength`, `maxLength` and
 * `pattern` may constrain. DATE (fixed format), SELECT and MULTI_SELECT (constrained by their
 * options) and BOOLEAN are not among them; NUMBER takes `min` and `max` instead.
 */
export const STRING_FIELD_TYPES: readonly FieldType[] = [
  'TEXT',
  'TEXTAREA',
  'EMAIL',
  'URL',
  'PHONE',
  'COUNTRY',
];

export const isOptionFieldType = (type: FieldType): boolean => OPTION_FIELD_TYPES.includes(type);
export const isStringFieldType = (type: FieldType): boolean => STRING_FIELD_TYPES.includes(type);
