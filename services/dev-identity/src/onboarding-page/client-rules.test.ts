import { describe, expect, it } from '@jest/globals';
import { checkValues, type RawInput } from './client/form-values.js';
import { fieldKeyOfPath, missingFieldsOf, valueIssues } from './client/problem-details.js';
import { readRequirements, type Requirement } from './client/requirements.js';

// The DOM-free parts of the page's client; the page itself runs in Chromium in
// onboarding-page-chromium.test.ts.

const requirementsOf = (entries: Record<string, unknown>[]): Requirement[] =>
  readRequirements({ requirementVersion: 1, requirements: entries }).requirements;

describe('readRequirements', () => {
  it('fills defaults, keeps the first of a repeated field key and drops unknown values', () => {
    const read = readRequirements({
      platformKey: 'SHOP',
      platformDisplayName: 'Shop',
      requirementVersion: 4,
      requirements: [
        { fieldKey: 'a', label: 'A', fieldType: 'TEXT', uiConfig: { width: 'wide' } },
        { fieldKey: 'a', label: 'A again', fieldType: 'NUMBER' },
        { fieldKey: 'b', label: 'B', fieldType: 'MULTI_SELECT', currentValue: ['x', 1] },
      ],
    });
    expect(read.requirementVersion).toBe(4);
    expect(read.requirements.map((r) => [r.fieldKey, r.label, r.uiConfig])).toEqual([
      ['a', 'A', {}],
      ['b', 'B', {}],
    ]);
    expect(read.requirements[1]?.currentValue).toEqual(['x']);
    expect(read.requirements[0]).toMatchObject({ required: false, options: [], validation: {} });
  });

  it.each([
    [null, /not an object/],
    [{ requirements: [] }, /no requirementVersion/],
    [{ requirementVersion: 1 }, /no requirements/],
    [
      { requirementVersion: 1, requirements: [{ fieldKey: 'a', label: 'A', fieldType: 'RICH' }] },
      /a has an unknown field type/,
    ],
  ])('refuses %j', (body, message) => {
    expect(() => readRequirements(body)).toThrow(message);
  });
});

describe('checkValues', () => {
  const requirements = requirementsOf([
    { fieldKey: 'name', label: 'Name', fieldType: 'TEXT', required: true },
    { fieldKey: 'phone', label: 'Phone', fieldType: 'PHONE' },
    { fieldKey: 'country', label: 'Country', fieldType: 'COUNTRY' },
    { fieldKey: 'size', label: 'Size', fieldType: 'NUMBER', validation: { max: 10 } },
    { fieldKey: 'agree', label: 'Agree', fieldType: 'BOOLEAN', required: true },
    {
      fieldKey: 'tags',
      label: 'Tags',
      fieldType: 'MULTI_SELECT',
      options: [{ value: 'a', label: 'A' }],
    },
  ]);
  const check = (inputs: Record<string, RawInput>) =>
    checkValues(requirements, (requirement) => inputs[requirement.fieldKey] ?? { raw: null });

  it('normalises what a form holds (spec 4.9)', () => {
    expect(
      check({
        name: { raw: '  Ada ' },
        phone: { raw: '+1 (555) 123-45.67' },
        country: { raw: ' us ' },
        size: { raw: '7' },
        agree: { raw: false },
        tags: { raw: [] },
      }),
    ).toEqual({
      values: {
        name: 'Ada',
        phone: '+15551234567',
        country: 'US',
        size: 7,
        agree: false,
        tags: [],
      },
      errors: new Map(),
    });
  });

  it('names each field with a problem: value rules, required fields, unparsable numbers', () => {
    const { errors } = check({
      name: { raw: '   ' },
      phone: { raw: '12' },
      size: { raw: '11' },
      agree: { raw: null },
    });
    expect(Object.fromEntries(errors)).toEqual({
      name: 'This field is required.',
      phone: 'Must be an E.164 phone number: + then 7 to 15 digits.',
      size: 'Must be at most 10.',
      agree: 'This field is required.',
    });
    expect(check({ size: { raw: '', unparsable: true } }).errors.get('size')).toBe(
      'Enter a number.',
    );
  });
});

describe('problem details', () => {
  it('places 400 issues by fieldKey, else by the path values.<fieldKey>', () => {
    expect(
      valueIssues({
        issues: [
          { location: 'body', path: 'values.plan', message: 'sold out' },
          { location: 'body', path: 'values.x', fieldKey: 'website', message: 'blocked' },
          { location: 'body', path: 'requirementVersion', message: 'stale' },
          { message: 42 },
        ],
      }),
    ).toEqual({
      fields: [
        { fieldKey: 'plan', message: 'sold out' },
        { fieldKey: 'website', message: 'blocked' },
      ],
      other: ['stale'],
    });
    expect(valueIssues(undefined)).toEqual({ fields: [], other: [] });
    expect(fieldKeyOfPath('values.tags.1')).toBe('tags');
    expect(fieldKeyOfPath('values.tags[1]')).toBe('tags');
    expect(fieldKeyOfPath('body')).toBeUndefined();
  });

  it('reads the missing fields of a 409', () => {
    expect(missingFieldsOf({ missingFields: ['a', 3, 'b'] })).toEqual(['a', 'b']);
    expect(missingFieldsOf({})).toEqual([]);
  });
});
