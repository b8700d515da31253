import { randomUUID } from 'node:crypto';
import type { JsonObject } from '@bufbuild/protobuf';
import type { Database } from '@gateway/db';
import type { Knex } from 'knex';
import { GatewayError } from '@gateway/errors';
import {
  fieldDefinitionPatchSchema,
  fieldDefinitionSchema,
  mergeFieldDefinitionPatch,
  sortFieldDefinitions,
  type FieldDefinition,
} from '@gateway/field-rules';
import { invalidDefinition, isUniqueViolation, parsedDefinition } from './definition-errors.js';
import { reopenCompleteMemberships } from './memberships.js';
import { bumpSchemaVersion, platformSchema } from './schema-versions.js';

// Spec 2.10-2.13, 3.6, 4.13: a platform's onboarding field definitions. Every rule on a
// definition lives in @gateway/field-rules; this module stores and loads them. Each change
// moves the platform's requirementVersion up and its COMPLETE memberships to IN_PROGRESS in
// the same transaction (spec 3.6).

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

/** Spec 3.6: what every create, update, archive or restore does besides the definition. */
async function recordSchemaChange(trx: Knex.Transaction, platformKey: string): Promise<void> {
  await bumpSchemaVersion(trx, platformSchema(platformKey));
  await reopenCompleteMemberships(trx, platformKey);
}

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

async function requireRow(knex: Knex, platformKey: string, fieldKey: string): Promise<FieldRow> {
  const row = (await knex(table)
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
  return viewOf(await requireRow(db.knex, platformKey, fieldKey));
}

/** Spec 4.13 create: defaults applied; a duplicate fieldKey is 409 CONFLICT. */
export async function createPlatformField(
  db: Database,
  platformKey: string,
  body: JsonObject | undefined,
): Promise<PlatformFieldView> {
  const { fieldKey, ...definition } = parsedDefinition(fieldDefinitionSchema.safeParse(body ?? {}));
  const now = new Date();
  try {
    return await db.knex.transaction(async (trx) => {
      const rows = (await trx(table)
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
      await recordSchemaChange(trx, platformKey);
      return viewOf(row);
    });
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
  const { active, ...patch } = parsedDefinition(fieldDefinitionPatchSchema.safeParse(body ?? {}));
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
    await recordSchemaChange(trx, platformKey);
    return { field: viewOf(updated), changed };
  });
}

/** Spec 3.6 DELETE: soft archive (values kept). `changed` is false when already archived. */
export async function archivePlatformField(
  db: Database,
  platformKey: string,
  fieldKey: string,
): Promise<{ field: PlatformFieldView; changed: boolean }> {
  return db.knex.transaction(async (trx) => {
    const rows = (await trx(table)
      .where({ platform_key: platformKey, field_key: fieldKey, active: true })
      .update({ active: false, updated_at: new Date() })
      .returning('*')) as FieldRow[];
    const updated = rows[0];
    if (updated === undefined) {
      return { field: viewOf(await requireRow(trx, platformKey, fieldKey)), changed: false };
    }
    await recordSchemaChange(trx, platformKey);
    return { field: viewOf(updated), changed: true };
  });
}
