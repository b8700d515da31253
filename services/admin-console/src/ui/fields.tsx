import type { ReactNode } from 'react';

type FieldProps = {
  id: string;
  label: string;
  hint?: ReactNode;
  error?: string | undefined;
  children: (aria: { id: string; 'aria-describedby'?: string; 'aria-invalid'?: true }) => ReactNode;
};

/**
 * A labelled control with its hint and its error right below it, tied together for screen
 * readers (aria-describedby, aria-invalid).
 */
export function Field({ id, label, hint, error, children }: FieldProps) {
  const described = [
    hint === undefined ? '' : `${id}-hint`,
    error === undefined ? '' : `${id}-error`,
  ]
    .filter((value) => value !== '')
    .join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({
        id,
        ...(described === '' ? {} : { 'aria-describedby': described }),
        ...(error === undefined ? {} : { 'aria-invalid': true as const }),
      })}
      {hint === undefined ? null : (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error === undefined ? null : (
        <p className="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

type CheckboxProps = {
  id: string;
  label: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  hint?: ReactNode;
};

export function Checkbox({ id, label, checked, onChange, hint }: CheckboxProps) {
  return (
    <div className="field checkbox">
      <input
        id={id}
        type="checkbox"
        checked={checked}
        onChange={(event) => onChange(event.target.checked)}
        {...(hint === undefined ? {} : { 'aria-describedby': `${id}-hint` })}
      />
      <label htmlFor={id}>{label}</label>
      {hint === undefined ? null : (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
}
