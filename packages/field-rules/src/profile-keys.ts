import type { FieldType } from './field-types.js';

/** The canonical profile keys of spec 2.5, in the order the spec lists them. */
export const canonicalProfileKeys = [
  'firstName',
  'middleName',
  'lastName',
  'nickname',
  'phoneNumber',
  'dateOfBirth',
  'gender',
  'bio',
  'nationalityCountryCode',
  'secondaryNationalityCountryCode',
  'residenceCountryCode',
  'preferredLocale',
  'timezone',
] as const;
export type CanonicalProfileKey = (typeof canonicalProfileKeys)[number];

/**
 * The field types each canonical profile key can hold (spec 2.10: "a global field can only
 * have a type the profile field can hold"). The first type is the natural one.
 *
 * | Profile key                                  | Field types          | Why |
 * |----------------------------------------------|----------------------|-----|
 * | firstName, middleName, lastName, nickname    | TEXT                 | single-line names |
 * | phoneNumber                                  | PHONE                | stored E.164-style |
 * | dateOfBirth                                  | DATE                 | stored `YYYY-MM-DD` |
 * | gender                                       | SELECT, TEXT         | a platform-defined list, or free text |
 * | bio                                          | TEXTAREA, TEXT       | free text, usually multi-line |
 * | nationalityCountryCode, secondaryNationalityCountryCode, residenceCountryCode | COUNTRY | ISO 3166-1 alpha-2 |
 * | preferredLocale                              | SELECT, TEXT         | a BCP 47 tag, usually chosen from a list |
 * | timezone                                     | SELECT, TEXT         | an IANA zone name, usually chosen from a list |
 *
 * None of them holds a NUMBER, BOOLEAN, MULTI_SELECT, EMAIL or URL: the profile stores one
 * string per key, and the e-mail address comes from the identity provider.
 */
export const profileKeyFieldTypes: Readonly<Record<CanonicalProfileKey, readonly FieldType[]>> = {
  firstName: ['TEXT'],
  middleName: ['TEXT'],
  lastName: ['TEXT'],
  nickname: ['TEXT'],
  phoneNumber: ['PHONE'],
  dateOfBirth: ['DATE'],
  gender: ['SELECT', 'TEXT'],
  bio: ['TEXTAREA', 'TEXT'],
  nationalityCountryCode: ['COUNTRY'],
  secondaryNationalityCountryCode: ['COUNTRY'],
  residenceCountryCode: ['COUNTRY'],
  preferredLocale: ['SELECT', 'TEXT'],
  timezone: ['SELECT', 'TEXT'],
};

export function isCanonicalProfileKey(key: unknown): key is CanonicalProfileKey {
  return typeof key === 'string' && (canonicalProfileKeys as readonly string[]).includes(key);
}

/** Whether the canonical profile key `key` can hold a value of `fieldType`. */
export function profileKeyAllowsType(key: CanonicalProfileKey, fieldType: FieldType): boolean {
  return profileKeyFieldTypes[key].includes(fieldType);
}
