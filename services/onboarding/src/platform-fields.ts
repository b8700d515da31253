import { randomUUID } from 'node:crypto';
import type { JsonObject } from '@bufbuild/protobuf';
import type { Database } from '@gateway/db';
import { GatewayError } from '@gateway/errors';
import {
  fieldDefinitionPatchSchema,
  fieldDefinitionSchema,
  mergeFieldDefinitionPatch,
  sortFieldDefinitions,
  type FieldDefinition,
  type FieldDefinitionIssue,
} from '@gateway/field-rules';

// Spec 2.10-2.13, 3.6, 4.13: a platform's onboarding field definitions. Every rule on a
// definition lives in @gateway/field-rules; this module stores and loads them.

const table = 'onboarding.field_definitions';

/** The stored properties of a definition: everything of spec 2.10 but fieldKey and active. */
export type StoredDefinition = Omit<FieldDefinition, 'fieldKey'>;

type FieldRow = {
  id: string;
  platform_key: string;
  field_key: string;
  definition: StoredDefinition;
  active: boolean;
  created_at: Date;
  updated_at: Date;
};

export type PlatformFieldView = {
  id: string;
  platformKey: string;
  fieldKey: string;
  active: boolean;
  definition: StoredDefinition;
  createdAt: Date;
  updatedAt: Date;
};

function viewOf(row: FieldRow): PlatformFieldView {
  return {
    id: row.id,
    platformKey: row.platform_key,
    fieldKey: row.field_key,
    active: row.active,
    definition: row.definition,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505'
  );
}

/** 400 VALIDATION_ERROR naming each offending property, as the edge reports a body. */
function invalidDefinition(issues: readonly FieldDefinitionIssue[]): GatewayError {
  return new GatewayError('VALIDATION_ERROR', 'Invalid request body.', {
    details: {
      issues: issues.map((issue) => ({
        location: 'body',
        path: issue.path.map(String).join('.'),
        message: issue.message,
      })),
    },
  });
}

type ParseResult<T> =
  | { success: true; data: T }
  | { success: false; error: { issues: readonly { path: PropertyKey[]; message: string }[] } };

function parsed<T>(result: ParseResult<T>): T {
  if (result.success) return result.data;
  throw invalidDefinition(
    result.error.issues.map((issue) => ({
      path: issue.path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment)),
      message: issue.message,
    })),
  );
}

async function requireRow(db: Database, platformKey: string, fieldKey: string): Promise<FieldRow> {
  const row = (await db
    .knex(table)
    .where({ platform_key: platformKey, field_key: fieldKey })
    .first()) as FieldRow | undefined;
  if (row === undefined) {
    throw new GatewayError('NOT_FOUND', `Platform ${platformKey} has no field ${fieldKey}.`);
  }
  return row;
}

/** Spec 4.13: every definition of the platform, archived included, in render order. */
export async function listPlatformFields(
  db: Database,
  platformKey: string,
): Promise<PlatformFieldView[]> {
  const rows = (await db.knex(table).where({ platform_key: platformKey })) as FieldRow[];
  return sortFieldDefinitions(
    rows.map(viewOf).map((view) => ({ ...view, sortOrder: view.definition.sortOrder })),
  ).map(({ sortOrder: _sortOrder, ...view }) => view);
}

export async function getPlatformField(
  db: Database,
  platformKey: string,
  fieldKey: string,
): Promise<PlatformFieldView> {
  return viewOf(await requireRow(db, platformKey, fieldKey));
}

/** Spec 4.13 create: defaults applied; a duplicate fieldKey is 409 CONFLICT. */
export async function createPlatformField(
  db: Database,
  platformKey: string,
  body: JsonObject | undefined,
): Promise<PlatformFieldView> {
  const { fieldKey, ...definition } = parsed(fieldDefinitionSchema.safeParse(body ?? {}));
  const now = new Date();
  try {
    const rows = (await db
      .knex(table)
      .insert({
        id: randomUUID(),
        platform_key: platformKey,
        field_key: fieldKey,
        definition: JSON.stringify(definition),
        active: true,
        created_at: now,
        updated_at: now,
      })
      .returning('*')) as FieldRow[];
    const row = rows[0];
    if (row === undefined) throw new Error('insert returned no row');
    return viewOf(row);
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new GatewayError(
        'CONFLICT',
        `Platform ${platformKey} already has a field ${fieldKey}.`,
      );
    }
    throw error;
  }
}

/**
 * Spec 4.13 PATCH: mutable properties and `active` (fieldKey is immutable: 400). The
 * cross-property rules are checked on the merged definition. `changed` is false when nothing
 * differs from what was stored.
 */
export async function updatePlatformField(
  db: Database,
  platformKey: string,
  fieldKey: string,
  body: JsonObject | undefined,
): Promise<{ field: PlatformFieldView; changed: boolean }> {
  const { active, ...patch } = parsed(fieldDefinitionPatchSchema.safeParse(body ?? {}));
  return db.knex.transaction(async (trx) => {
    const row = (await trx(table)
      .where({ platform_key: platformKey, field_key: fieldKey })
      .forUpdate()
      .first()) as FieldRow | undefined;
    if (row === undefined) {
      throw new GatewayError('NOT_FOUND', `Platform ${platformKey} has no field ${fieldKey}.`);
    }
    const merged = mergeFieldDefinitionPatch(row.definition, patch);
    if (!merged.ok) throw invalidDefinition(merged.issues);
    const nextActive = active ?? row.active;
    const changed =
      nextActive !== row.active ||
      JSON.stringify(merged.definition) !== JSON.stringify(row.definition);
    if (!changed) return { field: viewOf(row), changed };
    const rows = (await trx(table)
      .where({ id: row.id })
      .update({
        definition: JSON.stringify(merged.definition),
        active: nextActive,
        updated_at: new Date(),
      })
      .returning('*')) as FieldRow[];
    const updated = rows[0];
    if (updated === undefined) throw new Error('update returned no row');
    return { field: viewOf(updated), changed };
  });
}

/** Spec 3.6 DELETE: soft archive (values kept). `changed` is false when already archived. */
export async function archivePlatformField(
  db: Database,
  platformKey: string,
  fieldKey: string,
): Promise<{ field: PlatformFieldView; changed: boolean }> {
  const row = await requireRow(db, platformKey, fieldKey);
  if (!row.active) return { field: viewOf(row), changed: false };
  const rows = (await db
    .knex(table)
    .where({ id: row.id, active: true })
    .update({ active: false, updated_at: new Date() })
    .returning('*')) as FieldRow[];
  const updated = rows[0];
  if (updated === undefined)
    return { field: await getPlatformField(db, platformKey, fieldKey), changed: false };
  return { field: viewOf(updated), changed: true };
}
