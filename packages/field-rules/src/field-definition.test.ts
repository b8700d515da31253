import { describe, expect, it } from '@jest/globals';
import {
  checkFieldDefinition,
  fieldDefinitionPatchSchema,
  fieldDefinitionSchema,
  globalFieldDefinitionPatchSchema,
  globalFieldDefinitionSchema,
  mergeFieldDefinitionPatch,
} from './field-definition.js';
import type { FieldDefinition } from './field-definition.js';

const text = { fieldKey: 'company', label: 'Company', fieldType: 'TEXT', source: 'CUSTOM_FIELD' };
const select = {
  fieldKey: 'team',
  label: 'Team',
  fieldType: 'SELECT',
  source: 'CUSTOM_FIELD',
  options: [
    { value: 'red', label: 'Red team' },
    { value: 'blue', label: 'Blue team' },
  ],
};

/** The issues of a create body as `path: message` lines. */
function issues(body: unknown): string[] {
  const result = fieldDefinitionSchema.safeParse(body);
  if (result.success) return [];
  return result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}
const accepted = (body: unknown): boolean => fieldDefinitionSchema.safeParse(body).success;

describe('fieldDefinitionSchema', () => {
  it('fills the defaults of a minimal body', () => {
    expect(fieldDefinitionSchema.parse(text)).toEqual({
      ...text,
      profileFieldKey: null,
      description: null,
      placeholder: null,
      sortOrder: 0,
      required: false,
      options: [],
      validation: {},
      uiConfig: {},
    });
  });

  it('accepts a complete PROFILE_FIELD body', () => {
    const body = {
      fieldKey: 'birthDate',
      label: '  Date of birth ',
      fieldType: 'DATE',
      source: 'PROFILE_FIELD',
      profileFieldKey: 'dateOfBirth',
      description: 'Used for age checks',
      placeholder: 'YYYY-MM-DD',
      sortOrder: -3,
      required: true,
      options: [],
      validation: {},
      uiConfig: {
        section: 'About you',
        width: 'half',
        helpText: 'a < b is fine',
        component: 'date',
      },
    };
    expect(fieldDefinitionSchema.parse(body)).toEqual({ ...body, label: 'Date of birth' });
  });

  it.each(['ab', 'a1', 'firstName', 'x_9', 'A' + 'b'.repeat(63)])('accepts fieldKey %s', (key) => {
    expect(accepted({ ...text, fieldKey: key })).toBe(true);
  });

  it.each(['a', '1ab', '_ab', 'a-b', 'a b', 'A' + 'b'.repeat(64), ''])(
    'rejects fieldKey %j',
    (key) => {
      expect(issues({ ...text, fieldKey: key })).toEqual([
        'fieldKey: must match ^[A-Za-z][A-Za-z0-9_]{1,63}$',
      ]);
    },
  );

  it('rejects unknown keys, including active on create', () => {
    expect(accepted({ ...text, colour: 'red' })).toBe(false);
    expect(accepted({ ...text, active: true })).toBe(false);
  });

  it('requires label, fieldType and source', () => {
    expect(accepted({ fieldKey: 'abc', fieldType: 'TEXT', source: 'CUSTOM_FIELD' })).toBe(false);
    expect(accepted({ fieldKey: 'abc', label: 'L', source: 'CUSTOM_FIELD' })).toBe(false);
    expect(accepted({ fieldKey: 'abc', label: 'L', fieldType: 'TEXT' })).toBe(false);
    expect(issues({ ...text, fieldType: 'COLOR' })[0]).toMatch(/^fieldType: must be one of TEXT/);
    expect(issues({ ...text, source: 'OTHER' })).toEqual([
      'source: must be one of PROFILE_FIELD, CUSTOM_FIELD',
    ]);
  });

  it('limits label to 1..200 characters (code points) of plain text', () => {
    expect(accepted({ ...text, label: 'x'.repeat(200) })).toBe(true);
    expect(accepted({ ...text, label: '😀'.repeat(200) })).toBe(true);
    expect(issues({ ...text, label: 'x'.repeat(201) })).toEqual([
      'label: must be at most 200 characters',
    ]);
    expect(issues({ ...text, label: '   ' })).toEqual(['label: must not be empty']);
    expect(issues({ ...text, label: '' })).toEqual(['label: must not be empty']);
  });

  it.each(['<b>Name</b>', 'Name <script>', 'x</p>', '<!-- c -->', '<?xml?>', '<img src=x>'])(
    'rejects HTML in label, description, placeholder: %s',
    (html) => {
      expect(issues({ ...text, label: html })[0]).toMatch(/^label: must not contain HTML/);
      expect(issues({ ...text, description: html })[0]).toMatch(/^description: must not contain/);
      expect(issues({ ...text, placeholder: html })[0]).toMatch(/^placeholder: must not contain/);
    },
  );

  it.each(['a < b', '<3', 'x <= 5', '< tag', 'A<1'])('allows %s, which is not HTML', (plain) => {
    expect(accepted({ ...text, label: plain, description: plain, placeholder: plain })).toBe(true);
  });

  it('limits description to 1000 and placeholder to 300; empty means none', () => {
    expect(accepted({ ...text, description: 'd'.repeat(1000), placeholder: 'p'.repeat(300) })).toBe(
      true,
    );
    expect(issues({ ...text, description: 'd'.repeat(1001) })).toEqual([
      'description: must be at most 1000 characters',
    ]);
    expect(issues({ ...text, placeholder: 'p'.repeat(301) })).toEqual([
      'placeholder: must be at most 300 characters',
    ]);
    expect(fieldDefinitionSchema.parse({ ...text, description: '', placeholder: null })).toEqual(
      expect.objectContaining({ description: null, placeholder: null }),
    );
  });

  it('requires an integer sortOrder and a boolean required', () => {
    expect(accepted({ ...text, sortOrder: 10 })).toBe(true);
    expect(accepted({ ...text, sortOrder: 1.5 })).toBe(false);
    expect(accepted({ ...text, sortOrder: '1' })).toBe(false);
    expect(accepted({ ...text, required: 'true' })).toBe(false);
  });

  describe('source and profileFieldKey', () => {
    const profile = { ...text, source: 'PROFILE_FIELD', profileFieldKey: 'firstName' };

    it('requires a canonical profileFieldKey for PROFILE_FIELD', () => {
      expect(accepted(profile)).toBe(true);
      expect(issues({ ...profile, profileFieldKey: undefined })).toEqual([
        'profileFieldKey: is required when source is PROFILE_FIELD',
      ]);
      expect(issues({ ...profile, profileFieldKey: '' })).toEqual([
        'profileFieldKey: is required when source is PROFILE_FIELD',
      ]);
      expect(issues({ ...profile, profileFieldKey: 'email' })[0]).toMatch(
        /^profileFieldKey: must be one of the canonical profile keys/,
      );
    });

    it('requires a type the profile field can hold', () => {
      expect(issues({ ...profile, profileFieldKey: 'dateOfBirth' })).toEqual([
        'fieldType: must be one the profile field dateOfBirth can hold: DATE',
      ]);
      expect(
        accepted({ ...profile, profileFieldKey: 'residenceCountryCode', fieldType: 'COUNTRY' }),
      ).toBe(true);
      expect(accepted({ ...profile, profileFieldKey: 'phoneNumber', fieldType: 'PHONE' })).toBe(
        true,
      );
      expect(accepted({ ...profile, profileFieldKey: 'phoneNumber' })).toBe(false);
    });

    it('requires an empty or null profileFieldKey for CUSTOM_FIELD', () => {
      expect(fieldDefinitionSchema.parse({ ...text, profileFieldKey: '' }).profileFieldKey).toBe(
        null,
      );
      expect(fieldDefinitionSchema.parse({ ...text, profileFieldKey: null }).profileFieldKey).toBe(
        null,
      );
      expect(issues({ ...text, profileFieldKey: 'firstName' })).toEqual([
        'profileFieldKey: must be empty or null for CUSTOM_FIELD',
      ]);
    });
  });

  describe('options', () => {
    it('accepts 1..200 options with unique values for SELECT and MULTI_SELECT', () => {
      expect(accepted(select)).toBe(true);
      expect(accepted({ ...select, fieldType: 'MULTI_SELECT' })).toBe(true);
      const many = Array.from({ length: 200 }, (_, i) => ({ value: `v${i}`, label: `V ${i}` }));
      expect(accepted({ ...select, options: many })).toBe(true);
      expect(issues({ ...select, options: [...many, { value: 'x', label: 'X' }] })).toEqual([
        'options: must have at most 200 options',
      ]);
    });

    it('requires options for SELECT and MULTI_SELECT', () => {
      expect(issues({ ...select, options: [] })).toEqual(['options: must not be empty for SELECT']);
      expect(issues({ ...select, fieldType: 'MULTI_SELECT', options: undefined })).toEqual([
        'options: must not be empty for MULTI_SELECT',
      ]);
    });

    it('requires [] for other types', () => {
      expect(issues({ ...select, fieldType: 'TEXT' })).toEqual(['options: must be [] for TEXT']);
    });

    it('rejects duplicate values, HTML labels, blank or padded values and unknown keys', () => {
      const option = (o: object) => ({ ...select, options: [{ value: 'a', label: 'A' }, o] });
      expect(issues(option({ value: 'a', label: 'Again' }))).toEqual([
        'options.1.value: must be unique among the options',
      ]);
      expect(issues(option({ value: 'b', label: '<i>B</i>' }))[0]).toMatch(
        /^options.1.label: must not contain HTML/,
      );
      expect(issues(option({ value: '', label: 'B' }))).toEqual([
        'options.1.value: must not be empty',
      ]);
      expect(issues(option({ value: ' b', label: 'B' }))).toEqual([
        'options.1.value: must not start or end with whitespace',
      ]);
      expect(issues(option({ value: 'b', label: '' }))).toEqual([
        'options.1.label: must not be empty',
      ]);
      expect(accepted(option({ value: 'b', label: 'B', color: 'red' }))).toBe(false);
      expect(accepted(option({ value: 2, label: 'B' }))).toBe(false);
    });
  });

  describe('validation', () => {
    const withValidation = (validation: object, body: object = text) => ({ ...body, validation });
    const number = { ...text, fieldType: 'NUMBER' };

    it('accepts minLength/maxLength/pattern for string types', () => {
      for (const fieldType of ['TEXT', 'TEXTAREA', 'EMAIL', 'URL', 'PHONE', 'COUNTRY']) {
        const body = withValidation({ minLength: 0, maxLength: 10, pattern: '^[A-Z]{2}$' });
        expect(accepted({ ...body, fieldType })).toBe(true);
      }
    });

    it('accepts min/max for NUMBER only', () => {
      expect(accepted(withValidation({ min: -1.5, max: 10 }, number))).toBe(true);
      expect(issues(withValidation({ min: 1 }))).toEqual([
        'validation.min: does not apply to TEXT',
      ]);
      expect(issues(withValidation({ maxLength: 3 }, number))).toEqual([
        'validation.maxLength: does not apply to NUMBER',
      ]);
    });

    it('allows no validation keys for BOOLEAN, DATE, SELECT and MULTI_SELECT', () => {
      expect(issues(withValidation({ pattern: '^2' }, { ...text, fieldType: 'DATE' }))).toEqual([
        'validation.pattern: does not apply to DATE',
      ]);
      expect(issues(withValidation({ maxLength: 2 }, select))).toEqual([
        'validation.maxLength: does not apply to SELECT',
      ]);
      expect(accepted(withValidation({}, { ...text, fieldType: 'BOOLEAN' }))).toBe(true);
    });

    it('rejects unknown keys', () => {
      expect(accepted(withValidation({ required: true }))).toBe(false);
      expect(accepted(withValidation({ format: 'email' }))).toBe(false);
    });

    it('checks the integer ranges of minLength and maxLength', () => {
      expect(accepted(withValidation({ minLength: 0 }))).toBe(true);
      expect(accepted(withValidation({ minLength: -1 }))).toBe(false);
      expect(accepted(withValidation({ minLength: 1.5 }))).toBe(false);
      expect(accepted(withValidation({ maxLength: 1 }))).toBe(true);
      expect(accepted(withValidation({ maxLength: 0 }))).toBe(false);
      expect(accepted(withValidation({ maxLength: '5' }))).toBe(false);
    });

    it('requires minLength <= maxLength and min <= max', () => {
      expect(accepted(withValidation({ minLength: 3, maxLength: 3 }))).toBe(true);
      expect(issues(withValidation({ minLength: 4, maxLength: 3 }))).toEqual([
        'validation.minLength: must not exceed maxLength',
      ]);
      expect(accepted(withValidation({ min: 2, max: 2 }, number))).toBe(true);
      expect(issues(withValidation({ min: 3, max: 2 }, number))).toEqual([
        'validation.min: must not exceed max',
      ]);
      expect(accepted(withValidation({ min: Infinity }, number))).toBe(false);
    });

    it('accepts safe patterns and rejects unsafe, invalid or long ones', () => {
      expect(accepted(withValidation({ pattern: '^\\d{5}(-\\d{4})?$' }))).toBe(true);
      expect(issues(withValidation({ pattern: '(a+)+$' }))[0]).toMatch(
        /^validation.pattern: must not repeat a group/,
      );
      expect(issues(withValidation({ pattern: '(a)\\1' }))).toEqual([
        'validation.pattern: must not use backreferences',
      ]);
      expect(issues(withValidation({ pattern: '[' }))).toEqual([
        'validation.pattern: must be a valid regular expression (with the `u` flag)',
      ]);
      expect(issues(withValidation({ pattern: 'a'.repeat(501) }))).toEqual([
        'validation.pattern: must be at most 500 characters',
      ]);
    });
  });

  describe('uiConfig', () => {
    const withUi = (uiConfig: object) => ({ ...text, uiConfig });

    it('accepts the allowed keys within their limits', () => {
      expect(
        accepted(
          withUi({
            section: 's'.repeat(100),
            width: 'third',
            helpText: 'h'.repeat(500),
            component: 'c'.repeat(50),
          }),
        ),
      ).toBe(true);
      expect(accepted(withUi({ width: 'full' }))).toBe(true);
      expect(accepted(withUi({ width: 'half' }))).toBe(true);
    });

    it('rejects unknown keys, other widths, long texts and HTML', () => {
      expect(accepted(withUi({ onClick: 'alert(1)' }))).toBe(false);
      expect(accepted(withUi({ html: '<b>x</b>' }))).toBe(false);
      expect(issues(withUi({ width: 'quarter' }))).toEqual([
        'uiConfig.width: must be one of full, half, third',
      ]);
      expect(issues(withUi({ section: 's'.repeat(101) }))).toEqual([
        'uiConfig.section: must be at most 100 characters',
      ]);
      expect(issues(withUi({ helpText: 'h'.repeat(501) }))).toEqual([
        'uiConfig.helpText: must be at most 500 characters',
      ]);
      expect(issues(withUi({ component: 'c'.repeat(51) }))).toEqual([
        'uiConfig.component: must be at most 50 characters',
      ]);
      expect(issues(withUi({ helpText: 'See <a href="x">here</a>' }))[0]).toMatch(
        /^uiConfig.helpText: must not contain HTML/,
      );
    });
  });
});

describe('checkFieldDefinition', () => {
  it('returns all cross-property issues at once', () => {
    expect(
      checkFieldDefinition({
        fieldType: 'NUMBER',
        source: 'CUSTOM_FIELD',
        profileFieldKey: 'bio',
        options: [{ value: 'a', label: 'A' }],
        validation: { pattern: '^a$', min: 2, max: 1 },
      }),
    ).toEqual([
      { path: ['profileFieldKey'], message: 'must be empty or null for CUSTOM_FIELD' },
      { path: ['options'], message: 'must be [] for NUMBER' },
      { path: ['validation', 'pattern'], message: 'does not apply to NUMBER' },
      { path: ['validation', 'min'], message: 'must not exceed max' },
    ]);
  });

  it('returns [] for a consistent definition', () => {
    expect(
      checkFieldDefinition({
        fieldType: 'TEXTAREA',
        source: 'PROFILE_FIELD',
        profileFieldKey: 'bio',
        options: [],
        validation: { maxLength: 500 },
      }),
    ).toEqual([]);
  });
});

describe('fieldDefinitionPatchSchema and mergeFieldDefinitionPatch', () => {
  const stored: FieldDefinition = fieldDefinitionSchema.parse(select);

  it('accepts any single mutable property and active', () => {
    expect(fieldDefinitionPatchSchema.parse({ label: 'New' })).toEqual({ label: 'New' });
    expect(fieldDefinitionPatchSchema.parse({ active: true })).toEqual({ active: true });
    expect(fieldDefinitionPatchSchema.parse({ description: '' })).toEqual({ description: null });
  });

  it('rejects an empty patch, fieldKey, unknown keys and bad properties', () => {
    expect(fieldDefinitionPatchSchema.safeParse({}).success).toBe(false);
    expect(fieldDefinitionPatchSchema.safeParse({ label: undefined }).success).toBe(false);
    expect(fieldDefinitionPatchSchema.safeParse({ fieldKey: 'other' }).success).toBe(false);
    expect(fieldDefinitionPatchSchema.safeParse({ colour: 'red' }).success).toBe(false);
    expect(fieldDefinitionPatchSchema.safeParse({ label: '<b>x' }).success).toBe(false);
    expect(
      fieldDefinitionPatchSchema.safeParse({ validation: { pattern: '(a|a)*' } }).success,
    ).toBe(false);
  });

  it('re-checks the cross-property rules on the merged definition', () => {
    const toText = fieldDefinitionPatchSchema.parse({ fieldType: 'TEXT' });
    expect(mergeFieldDefinitionPatch(stored, toText)).toEqual({
      ok: false,
      issues: [{ path: ['options'], message: 'must be [] for TEXT' }],
    });
    const toTextClean = fieldDefinitionPatchSchema.parse({ fieldType: 'TEXT', options: [] });
    const merged = mergeFieldDefinitionPatch(stored, toTextClean);
    expect(merged).toEqual({ ok: true, definition: { ...stored, fieldType: 'TEXT', options: [] } });

    const toProfile = fieldDefinitionPatchSchema.parse({ source: 'PROFILE_FIELD' });
    expect(mergeFieldDefinitionPatch(stored, toProfile)).toEqual({
      ok: false,
      issues: [{ path: ['profileFieldKey'], message: 'is required when source is PROFILE_FIELD' }],
    });
    const toGender = fieldDefinitionPatchSchema.parse({
      source: 'PROFILE_FIELD',
      profileFieldKey: 'gender',
    });
    expect(mergeFieldDefinitionPatch(stored, toGender).ok).toBe(true);
  });

  it('keeps the properties the patch leaves out', () => {
    const result = mergeFieldDefinitionPatch(
      stored,
      fieldDefinitionPatchSchema.parse({ required: true }),
    );
    expect(result).toEqual({ ok: true, definition: { ...stored, required: true } });
  });
});

describe('globalFieldDefinitionSchema', () => {
  const dob = { profileFieldKey: 'dateOfBirth', label: 'Date of birth', fieldType: 'DATE' };

  it('implies PROFILE_FIELD and keys the field by its profile key', () => {
    expect(globalFieldDefinitionSchema.parse({ ...dob, required: true })).toEqual({
      ...dob,
      source: 'PROFILE_FIELD',
      fieldKey: 'dateOfBirth',
      description: null,
      placeholder: null,
      sortOrder: 0,
      required: true,
      options: [],
      validation: {},
      uiConfig: {},
    });
    expect(globalFieldDefinitionSchema.safeParse({ ...dob, source: 'PROFILE_FIELD' }).success).toBe(
      true,
    );
    expect(globalFieldDefinitionSchema.safeParse({ ...dob, source: 'CUSTOM_FIELD' }).success).toBe(
      false,
    );
  });

  it('requires a canonical key and a type it can hold', () => {
    expect(
      globalFieldDefinitionSchema.safeParse({ ...dob, profileFieldKey: 'email' }).success,
    ).toBe(false);
    expect(globalFieldDefinitionSchema.safeParse({ ...dob, fieldType: 'TEXT' }).success).toBe(
      false,
    );
    const gender = {
      profileFieldKey: 'gender',
      label: 'Gender',
      fieldType: 'SELECT',
      options: [{ value: 'f', label: 'Female' }],
    };
    expect(globalFieldDefinitionSchema.safeParse(gender).success).toBe(true);
    expect(
      globalFieldDefinitionSchema.safeParse({ ...gender, fieldType: 'MULTI_SELECT' }).success,
    ).toBe(false);
  });

  it('rejects fieldKey and unknown keys', () => {
    expect(globalFieldDefinitionSchema.safeParse({ ...dob, fieldKey: 'dob' }).success).toBe(false);
    expect(globalFieldDefinitionSchema.safeParse({ ...dob, extra: 1 }).success).toBe(false);
  });

  it('patches with the same merged check', () => {
    const stored = globalFieldDefinitionSchema.parse(dob);
    expect(globalFieldDefinitionPatchSchema.safeParse({ profileFieldKey: 'bio' }).success).toBe(
      false,
    );
    expect(globalFieldDefinitionPatchSchema.safeParse({ source: 'CUSTOM_FIELD' }).success).toBe(
      false,
    );
    const toText = globalFieldDefinitionPatchSchema.parse({ fieldType: 'TEXT' });
    expect(mergeFieldDefinitionPatch(stored, toText).ok).toBe(false);
    const restore = globalFieldDefinitionPatchSchema.parse({ active: true });
    expect(mergeFieldDefinitionPatch(stored, restore)).toEqual({
      ok: true,
      definition: { ...stored, active: true },
    });
  });
});
