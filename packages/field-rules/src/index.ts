export {
  FIELD_SOURCES,
  FIELD_TYPES,
  OPTION_FIELD_TYPES,
  STRING_FIELD_TYPES,
} from './field-types.js';
export { isOptionFieldType, isStringFieldType } from './field-types.js';
export type { FieldSource, FieldType } from './field-types.js';
export {
  canonicalProfileKeys,
  isCanonicalProfileKey,
  profileKeyAllowsType,
  profileKeyFieldTypes,
} from './profile-keys.js';
export type { CanonicalProfileKey } from './profile-keys.js';
export {
  codePointLength,
  containsHtml,
  HTML_PATTERN,
  MAX_OPTIONS,
  NO_HTML_MESSAGE,
  TEXT_LIMITS,
} from './plain-text.js';
export { checkSafePattern, safePattern } from './safe-pattern.js';
export type { PatternCheck } from './safe-pattern.js';
export {
  canonicalProfileKeySchema,
  checkFieldDefinition,
  FIELD_KEY_PATTERN,
  fieldDefinitionPatchSchema,
  fieldDefinitionSchema,
  fieldKeySchema,
  fieldOptionSchema,
  fieldOptionsSchema,
  fieldSourceSchema,
  fieldTypeSchema,
  fieldUiConfigSchema,
  fieldValidationSchema,
  globalFieldDefinitionPatchSchema,
  globalFieldDefinitionSchema,
  mergeFieldDefinitionPatch,
  UI_WIDTHS,
} from './field-definition.js';
export type {
  FieldDefinition,
  FieldDefinitionIssue,
  FieldDefinitionPatch,
  FieldOption,
  FieldRuleProperties,
  FieldUiConfig,
  FieldValidation,
  GlobalFieldDefinition,
  GlobalFieldDefinitionPatch,
  MergeResult,
} from './field-definition.js';
export {
  COUNTRY_PATTERN,
  DATE_PATTERN,
  isCalendarDate,
  isEmailAddress,
  isEmptyValue,
  isHttpUrl,
  missingRequiredFields,
  PHONE_PATTERN,
  sortFieldDefinitions,
  validateFieldValue,
} from './field-values.js';
export type {
  FieldValue,
  FieldValueResult,
  FieldValueRules,
  RequirementField,
  SortableField,
} from './field-values.js';
export { normalizeClientValue, PHONE_SEPARATORS } from './normalize.js';
export {
  DISPLAY_NAME_MESSAGE,
  displayNameText,
  isDisplayName,
  isStorableText,
  STORED_TEXT_MESSAGE,
  storedText,
} from './stored-text.js';
export {
  METADATA_MAX_DEPTH,
  METADATA_MAX_KEY_LENGTH,
  METADATA_MAX_KEYS,
  metadataIssues,
  metadataSchema,
} from './stored-metadata.js';
