// The `details` of the gateway's error answers that name fields (spec 4.9, 7).

/** A message for one field, shown next to it. */
export type FieldMessage = { fieldKey: string; message: string };

/**
 * 400 VALIDATION_ERROR of a values save: `details.issues` holds
 * `{ location: 'body', path: 'values.<fieldKey>', fieldKey?, message }`. Issues that name a
 * field go next to it (by `fieldKey`, else the key read from `path`); the others are
 * returned as plain messages for the top of the page.
 */
export function valueIssues(details: unknown): { fields: FieldMessage[]; other: string[] } {
  const issues = isRecord(details) && Array.isArray(details.issues) ? details.issues : [];
  const fields: FieldMessage[] = [];
  const other: string[] = [];
  for (const issue of issues) {
    if (!isRecord(issue) || typeof issue.message !== 'string') continue;
    const fieldKey =
      typeof issue.fieldKey === 'string' && issue.fieldKey !== ''
        ? issue.fieldKey
        : fieldKeyOfPath(issue.path);
    if (fieldKey === undefined) other.push(issue.message);
    else fields.push({ fieldKey, message: issue.message });
  }
  return { fields, other };
}

/** `values.phone` → `phone`; `values.languages.1` and `values.languages[1]` → `languages`. */
export function fieldKeyOfPath(path: unknown): string | undefined {
  if (typeof path !== 'string') return undefined;
  return /^values\.([^.[\]]+)/.exec(path)?.[1];
}

/** 409 of `POST .../complete`: `details.missingFields`, the keys of missing required fields. */
export function missingFieldsOf(details: unknown): string[] {
  if (!isRecord(details) || !Array.isArray(details.missingFields)) return [];
  return details.missingFields.filter((key): key is string => typeof key === 'string');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
