import { useState, type FormEvent } from 'react';
import {
  canonicalProfileKeys,
  FIELD_TYPES,
  fieldDefinitionSchema,
  globalFieldDefinitionSchema,
  isOptionFieldType,
  profileKeyFieldTypes,
  type CanonicalProfileKey,
} from '@gateway/field-rules';
import { ApiProblem } from '../api/client.js';
import { ProblemAlert } from '../ui/alerts.js';
import { Checkbox, Field } from '../ui/fields.js';

/** What the editor holds; `body()` turns it into the create or update request. */
export type FieldDraft = {
  fieldKey: string;
  label: string;
  fieldType: string;
  source: 'PROFILE_FIELD' | 'CUSTOM_FIELD';
  profileFieldKey: string;
  description: string;
  placeholder: string;
  required: boolean;
  sortOrder: number;
  options: string;
  minLength: string;
  maxLength: string;
  pattern: string;
  min: string;
  max: string;
  section: string;
  width: string;
  helpText: string;
};

export type FieldLike = {
  fieldKey: string;
  label: string;
  fieldType: string;
  source: string;
  profileFieldKey: string | null;
  description: string | null;
  placeholder: string | null;
  required: boolean;
  sortOrder: number;
  options: { value: string; label: string }[];
  validation: Record<string, unknown>;
  uiConfig: Record<string, unknown>;
};

const text = (value: unknown) =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';

export function draftOfField(
  field: FieldLike | undefined,
  global: boolean,
  sortOrder: number,
): FieldDraft {
  return {
    fieldKey: field?.fieldKey ?? '',
    label: field?.label ?? '',
    fieldType: field?.fieldType ?? 'TEXT',
    source: global
      ? 'PROFILE_FIELD'
      : field?.source === 'PROFILE_FIELD'
        ? 'PROFILE_FIELD'
        : 'CUSTOM_FIELD',
    profileFieldKey: field?.profileFieldKey ?? (global ? 'nickname' : ''),
    description: field?.description ?? '',
    placeholder: field?.placeholder ?? '',
    required: field?.required ?? false,
    sortOrder: field?.sortOrder ?? sortOrder,
    options: (field?.options ?? []).map((option) => `${option.value}|${option.label}`).join('\n'),
    minLength: text(field?.validation.minLength),
    maxLength: text(field?.validation.maxLength),
    pattern: text(field?.validation.pattern),
    min: text(field?.validation.min),
    max: text(field?.validation.max),
    section: text(field?.uiConfig.section),
    width: text(field?.uiConfig.width),
    helpText: text(field?.uiConfig.helpText),
  };
}

const numberOf = (value: string) => (value.trim() === '' ? undefined : Number(value));
const nonEmpty = (value: string) => (value.trim() === '' ? undefined : value.trim());

/** The definition the draft describes, as the admin API takes it (spec 2.10 to 2.13). */
export function definitionOf(draft: FieldDraft, global: boolean): Record<string, unknown> {
  const validation = Object.fromEntries(
    Object.entries({
      minLength: numberOf(draft.minLength),
      maxLength: numberOf(draft.maxLength),
      pattern: nonEmpty(draft.pattern),
      min: numberOf(draft.min),
      max: numberOf(draft.max),
    }).filter(([, value]) => value !== undefined),
  );
  const uiConfig = Object.fromEntries(
    Object.entries({
      section: nonEmpty(draft.section),
      width: nonEmpty(draft.width),
      helpText: nonEmpty(draft.helpText),
    }).filter(([, value]) => value !== undefined),
  );
  const options = isOptionFieldType(draft.fieldType as never)
    ? draft.options
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== '')
        .map((line) => {
          const [value = '', label] = line.split('|');
          return { value: value.trim(), label: (label ?? value).trim() };
        })
    : [];
  return {
    ...(global
      ? { profileFieldKey: draft.profileFieldKey }
      : {
          fieldKey: draft.fieldKey,
          source: draft.source,
          profileFieldKey: draft.source === 'PROFILE_FIELD' ? draft.profileFieldKey : null,
        }),
    label: draft.label.trim(),
    fieldType: draft.fieldType,
    description: nonEmpty(draft.description) ?? null,
    placeholder: nonEmpty(draft.placeholder) ?? null,
    required: draft.required,
    sortOrder: draft.sortOrder,
    options,
    validation,
    uiConfig,
  };
}

/** The gateway's own definition rules (@gateway/field-rules), by field path. */
export function checkDefinition(
  definition: Record<string, unknown>,
  global: boolean,
): Record<string, string> {
  const result = (global ? globalFieldDefinitionSchema : fieldDefinitionSchema).safeParse(
    definition,
  );
  const errors: Record<string, string> = {};
  if (!result.success)
    for (const issue of result.error.issues)
      errors[issue.path.map(String).join('.')] ??= issue.message;
  return errors;
}

type EditorProps = {
  initial: FieldDraft;
  global: boolean;
  creating: boolean;
  onChange: (draft: FieldDraft) => void;
  onSubmit: (definition: Record<string, unknown>) => Promise<void>;
  onCancel: () => void;
};

export function FieldEditor(props: EditorProps) {
  const [draft, setDraftState] = useState(props.initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<unknown>();
  const setDraft = (next: FieldDraft) => {
    setDraftState(next);
    props.onChange(next);
  };
  const set = <K extends keyof FieldDraft>(name: K, value: FieldDraft[K]) =>
    setDraft({ ...draft, [name]: value });
  const types =
    props.global || draft.source === 'PROFILE_FIELD'
      ? (profileKeyFieldTypes[draft.profileFieldKey as CanonicalProfileKey] ?? FIELD_TYPES)
      : FIELD_TYPES;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setProblem(undefined);
    const definition = definitionOf(draft, props.global);
    const found = checkDefinition(definition, props.global);
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    try {
      await props.onSubmit(definition);
    } catch (error) {
      if (error instanceof ApiProblem) setErrors(error.fieldErrors());
      setProblem(error);
    }
  };
  const input = (
    name: keyof FieldDraft,
    label: string,
    hint?: string,
    errorPath: string = name,
  ) => (
    <Field id={`field-editor-${name}`} label={label} error={errors[errorPath]} hint={hint}>
      {(aria) => (
        <input
          {...aria}
          value={String(draft[name])}
          onChange={(event) => set(name, event.target.value as never)}
        />
      )}
    </Field>
  );
  return (
    <form
      className="field-editor"
      onSubmit={(event) => void submit(event)}
      noValidate
      aria-label={props.creating ? 'Add a field' : 'Edit the field'}
    >
      {!props.global && props.creating
        ? input(
            'fieldKey',
            'Field key',
            'Letters, digits and _, starting with a letter; cannot change later.',
          )
        : null}
      {!props.global ? (
        <Field id="field-editor-source" label="Stored as" error={errors.source}>
          {(aria) => (
            <select
              {...aria}
              value={draft.source}
              onChange={(event) => set('source', event.target.value as FieldDraft['source'])}
            >
              <option value="CUSTOM_FIELD">A value of this platform (CUSTOM_FIELD)</option>
              <option value="PROFILE_FIELD">The user's shared profile (PROFILE_FIELD)</option>
            </select>
          )}
        </Field>
      ) : null}
      {props.global || draft.source === 'PROFILE_FIELD' ? (
        <Field
          id="field-editor-profileFieldKey"
          label="Profile field"
          error={errors.profileFieldKey}
        >
          {(aria) => (
            <select
              {...aria}
              value={draft.profileFieldKey}
              disabled={props.global && !props.creating}
              onChange={(event) => set('profileFieldKey', event.target.value)}
            >
              {canonicalProfileKeys.map((key) => (
                <option key={key} value={key}>
                  {key}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : null}
      {input('label', 'Label')}
      <Field id="field-editor-fieldType" label="Type" error={errors.fieldType}>
        {(aria) => (
          <select
            {...aria}
            value={draft.fieldType}
            onChange={(event) => set('fieldType', event.target.value)}
          >
            {types.map((type) => (
              <option key={type} value={type}>
                {type}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Checkbox
        id="field-editor-required"
        label="Required: stop the sign-in until it is filled in"
        checked={draft.required}
        onChange={(checked) => set('required', checked)}
      />
      {input('description', 'Description (optional)')}
      {input('placeholder', 'Placeholder (optional)')}
      {isOptionFieldType(draft.fieldType as never) ? (
        <Field
          id="field-editor-options"
          label="Options"
          error={
            errors.options ??
            Object.entries(errors).find(([key]) => key.startsWith('options.'))?.[1]
          }
          hint="One a line: value|label."
        >
          {(aria) => (
            <textarea
              {...aria}
              value={draft.options}
              onChange={(event) => set('options', event.target.value)}
            />
          )}
        </Field>
      ) : null}
      <fieldset>
        <legend>Validation (optional)</legend>
        {input('minLength', 'Minimum length', undefined, 'validation.minLength')}
        {input('maxLength', 'Maximum length', undefined, 'validation.maxLength')}
        {input('pattern', 'Pattern (regular expression)', undefined, 'validation.pattern')}
        {input('min', 'Minimum', undefined, 'validation.min')}
        {input('max', 'Maximum', undefined, 'validation.max')}
      </fieldset>
      <fieldset>
        <legend>Display (optional)</legend>
        {input('section', 'Section heading', undefined, 'uiConfig.section')}
        <Field id="field-editor-width" label="Width" error={errors['uiConfig.width']}>
          {(aria) => (
            <select
              {...aria}
              value={draft.width}
              onChange={(event) => set('width', event.target.value)}
            >
              <option value="">full (default)</option>
              <option value="half">half</option>
              <option value="third">third</option>
            </select>
          )}
        </Field>
        {input('helpText', 'Help text', undefined, 'uiConfig.helpText')}
      </fieldset>
      <ProblemAlert problem={problem} />
      <div className="actions">
        <button type="submit" className="primary">
          {props.creating ? 'Add the field' : 'Save the field'}
        </button>
        <button type="button" className="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
