import { useMemo, useState } from 'react';
import { sortFieldDefinitions, type CanonicalProfileKey } from '@gateway/field-rules';
import { api, unwrap } from '../api/client.js';
import { navigate } from '../app/router.js';
import { OnboardingPreview, type PreviewField } from '../preview/onboarding-preview.js';
import { Loading, Notice, ProblemAlert } from '../ui/alerts.js';
import { ConfirmAction } from '../ui/confirm-action.js';
import { Field } from '../ui/fields.js';
import { useLoad } from '../ui/use-load.js';
import {
  definitionOf,
  draftOfField,
  FieldEditor,
  type FieldDraft,
  type FieldLike,
} from './field-editor.js';
import { usePageTitle } from './page-title.js';

type Listed = FieldLike & { active: boolean; createdAt: string };
type Scope = { global: true } | { global: false; platformKey: string };

/** The fields of one scope and the calls that change them (spec 4.13). */
function fieldsApi(scope: Scope) {
  if (scope.global) {
    const item = (key: string) => ({
      params: { path: { profileFieldKey: key as CanonicalProfileKey } },
    });
    return {
      list: async () =>
        (await unwrap(api.GET('/v1/admin/onboarding/global-fields'))).items as Listed[],
      version: async () =>
        (await unwrap(api.GET('/v1/onboarding/global/requirements'))).requirementVersion,
      create: (body: Record<string, unknown>) =>
        unwrap(api.POST('/v1/admin/onboarding/global-fields', { body: body as never })),
      update: (key: string, body: Record<string, unknown>) =>
        unwrap(
          api.PATCH('/v1/admin/onboarding/global-fields/{profileFieldKey}', {
            ...item(key),
            body: body as never,
          }),
        ),
      archive: (key: string) =>
        unwrap(api.DELETE('/v1/admin/onboarding/global-fields/{profileFieldKey}', item(key))),
    };
  }
  const { platformKey } = scope;
  const item = (key: string) => ({ params: { path: { platformKey, fieldKey: key } } });
  const collection = { params: { path: { platformKey } } };
  return {
    list: async () =>
      (await unwrap(api.GET('/v1/platforms/{platformKey}/onboarding/fields', collection)))
        .items as Listed[],
    version: async () =>
      (await unwrap(api.GET('/v1/platforms/{platformKey}', collection))).requirementVersion,
    create: (body: Record<string, unknown>) =>
      unwrap(
        api.POST('/v1/platforms/{platformKey}/onboarding/fields', {
          ...collection,
          body: body as never,
        }),
      ),
    update: (key: string, body: Record<string, unknown>) =>
      unwrap(
        api.PATCH('/v1/platforms/{platformKey}/onboarding/fields/{fieldKey}', {
          ...item(key),
          body: body as never,
        }),
      ),
    archive: (key: string) =>
      unwrap(api.DELETE('/v1/platforms/{platformKey}/onboarding/fields/{fieldKey}', item(key))),
  };
}

export function OnboardingPage({ platformKey }: { platformKey: string | undefined }) {
  usePageTitle(
    platformKey === undefined ? 'Global onboarding fields' : `Onboarding fields of ${platformKey}`,
  );
  const scope: Scope =
    platformKey === undefined ? { global: true } : { global: false, platformKey };
  const calls = fieldsApi(scope);
  const platforms = useLoad(
    async () => (await unwrap(api.GET('/v1/platforms'))).items,
    'platforms',
  );
  const loaded = useLoad(async () => {
    const [fields, version, globals] = await Promise.all([
      calls.list(),
      calls.version(),
      scope.global ? Promise.resolve([]) : fieldsApi({ global: true }).list(),
    ]);
    return { fields, version, globals };
  }, platformKey ?? '(global)');
  const [editing, setEditing] = useState<{ key: string | undefined; draft: FieldDraft }>();
  const [notice, setNotice] = useState<string>();
  const [problem, setProblem] = useState<unknown>();
  const data = loaded.data;
  const fields = useMemo(() => sortFieldDefinitions(data?.fields ?? []), [data]);
  const preview = useMemo(
    () => previewFields(scope.global, data?.globals ?? [], fields, editing),
    [scope.global, data, fields, editing],
  );
  const changed = (message: string) => {
    setNotice(message);
    setEditing(undefined);
    loaded.reload();
  };
  const act = async (run: () => Promise<unknown>, message: string) => {
    setProblem(undefined);
    try {
      await run();
      changed(message);
    } catch (error) {
      setProblem(error);
    }
  };
  const move = (index: number, by: -1 | 1) => {
    const other = fields[index + by];
    const field = fields[index];
    if (other === undefined || field === undefined) return;
    // Swap places; equal orders get distinct ones, so the move is visible.
    const [first, second] =
      other.sortOrder === field.sortOrder
        ? [other.sortOrder + by, other.sortOrder]
        : [other.sortOrder, field.sortOrder];
    void act(
      async () => {
        await calls.update(field.fieldKey, { sortOrder: first });
        await calls.update(other.fieldKey, { sortOrder: second });
      },
      `${field.label} moved ${by < 0 ? 'up' : 'down'}.`,
    );
  };
  return (
    <>
      <h1>Onboarding fields</h1>
      <Field
        id="onboarding-scope"
        label="Fields of"
        hint="Global fields are asked of every user on every platform; platform fields only on that platform."
      >
        {(aria) => (
          <select
            {...aria}
            value={platformKey ?? ''}
            onChange={(event) =>
              navigate(
                event.target.value === ''
                  ? '/onboarding'
                  : `/onboarding/${encodeURIComponent(event.target.value)}`,
              )
            }
          >
            <option value="">Every platform (global profile fields)</option>
            {(platforms.data ?? []).map((platform) => (
              <option key={platform.platformKey} value={platform.platformKey}>
                {platform.platformKey} — {platform.displayName}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Notice>{notice}</Notice>
      <ProblemAlert problem={platforms.problem ?? loaded.problem} />
      {data === undefined ? (
        <Loading what="fields" />
      ) : (
        <div className="onboarding-layout">
          <div>
            <p>
              Requirement version <strong data-testid="requirement-version">{data.version}</strong>.
              Every change raises it; users who completed onboarding are asked for new required
              fields at their next sign-in.
            </p>
            <FieldTable
              fields={fields}
              onEdit={(field) =>
                setEditing({
                  key: field.fieldKey,
                  draft: draftOfField(field, scope.global, field.sortOrder),
                })
              }
              onMove={move}
              onArchive={async (field) => {
                // A failure stays in the confirmation dialog, beside its button.
                await calls.archive(field.fieldKey);
                changed(`${field.label} is archived; its saved values are kept.`);
              }}
              onRestore={(field) =>
                act(
                  () => calls.update(field.fieldKey, { active: true }),
                  `${field.label} is active again.`,
                )
              }
            />
            <ProblemAlert problem={problem} />
            {editing === undefined ? (
              <button
                type="button"
                className="primary"
                onClick={() =>
                  setEditing({
                    key: undefined,
                    draft: draftOfField(
                      undefined,
                      scope.global,
                      (fields.at(-1)?.sortOrder ?? 0) + 10,
                    ),
                  })
                }
              >
                Add a field
              </button>
            ) : (
              <section aria-labelledby="editor-title">
                <h2 id="editor-title">
                  {editing.key === undefined ? 'New field' : `Edit ${editing.key}`}
                </h2>
                <FieldEditor
                  key={editing.key ?? '(new)'}
                  initial={editing.draft}
                  global={scope.global}
                  creating={editing.key === undefined}
                  onChange={(draft) => setEditing({ key: editing.key, draft })}
                  onCancel={() => setEditing(undefined)}
                  onSubmit={async (definition) => {
                    if (editing.key === undefined) await calls.create(definition);
                    else {
                      // The key never changes; a global field's profile key is its key.
                      const changes = Object.fromEntries(
                        Object.entries(definition).filter(
                          ([name]) => !['fieldKey', 'profileFieldKey', 'source'].includes(name),
                        ),
                      );
                      await calls.update(
                        editing.key,
                        scope.global
                          ? changes
                          : {
                              ...changes,
                              source: definition.source,
                              profileFieldKey: definition.profileFieldKey,
                            },
                      );
                    }
                    changed(
                      editing.key === undefined ? 'The field is added.' : 'The field is saved.',
                    );
                  }}
                />
              </section>
            )}
          </div>
          <OnboardingPreview
            fields={preview}
            requirementVersion={data.version}
            title={scope.global ? 'Complete your profile' : 'Complete your sign-up'}
            intro={
              scope.global
                ? 'A few details about you are needed before you continue.'
                : 'The application needs a few more details before you continue.'
            }
          />
        </div>
      )}
    </>
  );
}

function FieldTable(props: {
  fields: Listed[];
  onEdit: (field: Listed) => void;
  onMove: (index: number, by: -1 | 1) => void;
  onArchive: (field: Listed) => Promise<void>;
  onRestore: (field: Listed) => Promise<void>;
}) {
  if (props.fields.length === 0) return <p>No fields yet.</p>;
  return (
    <table>
      <caption className="visually-hidden">Fields</caption>
      <thead>
        <tr>
          <th scope="col">Order</th>
          <th scope="col">Field</th>
          <th scope="col">Type</th>
          <th scope="col">Required</th>
          <th scope="col">Status</th>
          <th scope="col">Actions</th>
        </tr>
      </thead>
      <tbody>
        {props.fields.map((field, index) => (
          <tr key={field.fieldKey}>
            <td>{field.sortOrder}</td>
            <th scope="row">
              {field.label} <code>{field.fieldKey}</code>
            </th>
            <td>{field.fieldType}</td>
            <td>{field.required ? 'required' : 'optional'}</td>
            <td>{field.active ? 'active' : 'archived'}</td>
            <td className="actions">
              <button
                type="button"
                className="small secondary"
                onClick={() => props.onEdit(field)}
                aria-label={`Edit ${field.fieldKey}`}
                title={`Edit ${field.fieldKey}`}
              >
                Edit
              </button>
              <button
                type="button"
                className="small secondary"
                disabled={index === 0}
                onClick={() => props.onMove(index, -1)}
                aria-label={`Move ${field.fieldKey} up`}
              >
                ↑
              </button>
              <button
                type="button"
                className="small secondary"
                disabled={index === props.fields.length - 1}
                onClick={() => props.onMove(index, 1)}
                aria-label={`Move ${field.fieldKey} down`}
              >
                ↓
              </button>
              {field.active ? (
                <ConfirmAction
                  label="Archive"
                  accessibleName={`Archive ${field.fieldKey}`}
                  title={`Archive ${field.label}?`}
                  confirmLabel="Archive the field"
                  danger
                  consequences={[
                    'Users are no longer asked for it; saved values are kept.',
                    'The requirement version goes up.',
                  ]}
                  onConfirm={() => props.onArchive(field)}
                  buttonClass="small secondary danger"
                />
              ) : (
                <button
                  type="button"
                  className="small secondary"
                  onClick={() => void props.onRestore(field)}
                  aria-label={`Restore ${field.fieldKey}`}
                  title={`Restore ${field.fieldKey}`}
                >
                  Restore
                </button>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Global fields first, then the platform's (spec 2.14), with the draft in place of its field. */
function previewFields(
  global: boolean,
  globals: Listed[],
  fields: Listed[],
  editing: { key: string | undefined; draft: FieldDraft } | undefined,
): PreviewField[] {
  const asRequirement = (
    field: Record<string, unknown>,
    scope: 'GLOBAL' | 'PLATFORM',
  ): PreviewField => ({
    ...field,
    fieldKey: String(field.fieldKey ?? field.profileFieldKey ?? ''),
    scope,
    currentValue: null,
  });
  const draft: Record<string, unknown> | undefined =
    editing === undefined
      ? undefined
      : {
          ...definitionOf(editing.draft, global),
          createdAt: new Date().toISOString(),
          active: true,
        };
  const own = fields.filter((field) => field.active && field.fieldKey !== editing?.key);
  const ownWithDraft = sortFieldDefinitions([
    ...own,
    ...(draft === undefined
      ? []
      : [
          {
            ...(draft as unknown as Listed),
            fieldKey: String(draft.fieldKey ?? draft.profileFieldKey ?? 'newField'),
          },
        ]),
  ]);
  const globalsShown = global ? [] : sortFieldDefinitions(globals.filter((field) => field.active));
  return [
    ...globalsShown.map((field) => asRequirement(field, 'GLOBAL')),
    ...ownWithDraft.map((field) => asRequirement(field, global ? 'GLOBAL' : 'PLATFORM')),
  ].filter((field) => field.fieldKey !== '');
}
