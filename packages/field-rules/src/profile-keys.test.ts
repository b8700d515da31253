import { describe, expect, it } from '@jest/globals';
import {
  canonicalProfileKeys,
  isCanonicalProfileKey,
  profileKeyAllowsType,
  profileKeyFieldTypes,
} from './profile-keys.js';

describe('canonical profile keys (spec 2.5)', () => {
  it('lists the 13 keys of the spec, each with at least one field type', () => {
    expect(canonicalProfileKeys).toEqual([
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
    ]);
    expect(Object.keys(profileKeyFieldTypes).sort()).toEqual([...canonicalProfileKeys].sort());
    for (const key of canonicalProfileKeys) {
      expect(profileKeyFieldTypes[key].length).toBeGreaterThan(0);
    }
  });

  it('gives the fixed types of typed keys', () => {
    expect(profileKeyFieldTypes.dateOfBirth).toEqual(['DATE']);
    expect(profileKeyFieldTypes.phoneNumber).toEqual(['PHONE']);
    expect(profileKeyFieldTypes.nationalityCountryCode).toEqual(['COUNTRY']);
    expect(profileKeyFieldTypes.secondaryNationalityCountryCode).toEqual(['COUNTRY']);
    expect(profileKeyFieldTypes.residenceCountryCode).toEqual(['COUNTRY']);
    expect(profileKeyAllowsType('bio', 'TEXTAREA')).toBe(true);
    expect(profileKeyAllowsType('timezone', 'SELECT')).toBe(true);
    expect(profileKeyAllowsType('firstName', 'NUMBER')).toBe(false);
    expect(profileKeyAllowsType('dateOfBirth', 'TEXT')).toBe(false);
  });

  it('recognises canonical keys only', () => {
    expect(isCanonicalProfileKey('timezone')).toBe(true);
    expect(isCanonicalProfileKey('avatarUrl')).toBe(false);
    expect(isCanonicalProfileKey('toString')).toBe(false);
    expect(isCanonicalProfileKey(1)).toBe(false);
  });
});
