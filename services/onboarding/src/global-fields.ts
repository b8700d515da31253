import type { Knex } from 'knex';
import type { JsonObject } from '@bufbuild/protobuf';
import type { Database } from '@gateway/db';
import { GatewayError } from '@gateway/errors';
import {
  globalFieldDefinitionPatchSchema,
  globalFieldDefinitionSchema,
  mergeFieldDefinitionPatch,
  sortFieldDefinitions,
  type GlobalFieldDefinition,
} from '@gateway/field-rules';
import { invalidDefinition, isUniqueViolation, parsedDefinition } from './definition-errors.js';
import { bumpSchemaVersion, GLOBAL_SCHEMA } from './schema-versions.js';

// Spec 2.10 (last paragraph), 4.13 global fields: definitions keyed by the canonical profile
// key, collected from every user of every platform. Each change moves the global
// requirement version up in the same transaction. Nothing is required until one is created
// with `required: true`; saved profile values stay when a field is archived.

const table = 'onboarding.global_field_definitions';

/** Everything of the create body but the key (fieldKey equals profileFieldKey). */
export type StoredGlobalDefinition = Omit<GlobalFieldDefinition, 'fieldKey'>;

type GlobalFieldRow = {
  profile_field_key: string;
  definition: StoredGlobalDefinition;
  active: boolean;
  created_at: Date;
  updated_at: Date;
};

export type GlobalFieldView = {
  profileFieldKey: string;
  active: boolean;
  definition: StoredGlobalDefinition;
  createdAt: Date;
  updatedAt: Date;
};

function viewOf(row: GlobalFieldRow): GlobalFieldView {
  return {
    profileFieldKey: row.profile_field_key,
    active: row.active,
    definition: row.definition,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

const notFound = (key: string): GatewayError =>
  new GatewayError('NOT_FOUND', `There is no global field ${key}.`);

async function requireRow(knex: Knex, profileFieldKey: string): Promise<GlobalFieldRow> {
  const row = (await knex(table).where({ profile_field_key: profileFieldKey }).first()) as
    GlobalFieldRow | undefined;
  if (row === undefined) throw notFound(profileFieldKey);
  return row;
}

/** Every global field, archived included (`activeOnly` for evaluation), in render order. */
export async function listGlobalFields(
  knex: Knex,
  options: { activeOnly?: boolean } = {},
): Promise<GlobalFieldView[]> {
  const query = knex(table);
  if (options.activeOnly === true) void query.where({ active: true });
  const rows = (await query) as GlobalFieldRow[];
  return sortFieldDefinitions(
    rows.map(viewOf).map((view) => ({
      ...view,
      sortOrder: view.definition.sortOrder,
      fieldKey: view.profileFieldKey,
    })),
  ).map(({ sortOrder: _sortOrder, fieldKey: _fieldKey, ...view }) => view);
}

export async function getGlobalField(
  db: Database,
  profileFieldKey: string,
): Promise<GlobalFieldView> {
  return viewOf(await requireRow(db.knex, profileFieldKey));
}

/** Spec 4.13 create: a second definition of the same profile key is 409 CONFLICT. */
export async function createGlobalField(
  db: Database,
  body: JsonObject | undefined,
): Promise<GlobalFieldView> {
  const definition = (({ fieldKey: _implied, ...rest }: GlobalFieldDefinition) => rest)(
    parsedDefinition(globalFieldDefinitionSchema.safeParse(body ?? {})),
  );
  const now = new Date();
  try {
    return await db.knex.transaction(async (trx) => {
      const rows = (await trx(table)
        .insert({
          profile_field_key: definition.profileFieldKey,
          definition: JSON.stringify(definition),
          active: true,
          created_at: now,
          updated_at: now,
        })
        .returning('*')) as GlobalFieldRow[];
      const row = rows[0];
      if (row === undefined) throw new Error('insert returned no row');
      await bumpSchemaVersion(trx, GLOBAL_SCHEMA);
      return viewOf(row);
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new GatewayError(
        'CONFLICT',
        `A global field for ${definition.profileFieldKey} already exists.`,
      );
    }
    throw error;
  }
}

/** Spec 4.13 PATCH: descriptive properties and `active` (true restores). */
export async function updateGlobalField(
  db: Database,
  profileFieldKey: string,
  body: JsonObject | undefined,
): Promise<{ field: GlobalFieldView; changed: boolean }> {
  const { active, ...patch } = parsedDefinition(
    globalFieldDefinitionPatchSchema.safeParse(body ?? {}),
  );
  return db.knex.transaction(async (trx) => {
    const row = (await trx(table)
      .where({ profile_field_key: profileFieldKey })
      .forUpdate()
      .first()) as GlobalFieldRow | undefined;
    if (row === undefined) throw notFound(profileFieldKey);
    const merged = mergeFieldDefinitionPatch(row.definition, patch);
    if (!merged.ok) throw invalidDefinition(merged.issues);
    const nextActive = active ?? row.active;
    const changed =
      nextActive !== row.active ||
      JSON.stringify(merged.definition) !== JSON.stringify(row.definition);
    if (!changed) return { field: viewOf(row), changed };
    const rows = (await trx(table)
      .where({ profile_field_key: profileFieldKey })
      .update({
        definition: JSON.stringify(merged.definition),
        active: nextActive,
        updated_at: new Date(),
      })
      .returning('*')) as GlobalFieldRow[];
    const updated = rows[0];
    if (updated === undefined) throw new Error('update returned no row');
    await bumpSchemaVersion(trx, GLOBAL_SCHEMA);
    return { field: viewOf(updated), changed };
  });
}

/** Spec 4.13 DELETE: soft archive; saved profile values are kept. */
export async function archiveGlobalField(
  db: Database,
  profileFieldKey: string,
): Promise<{ field: GlobalFieldView; changed: boolean }> {
  return db.knex.transaction(async (trx) => {
    const rows = (await trx(table)
      .where({ profile_field_key: profileFieldKey, active: true })
      .update({ active: false, updated_at: new Date() })
      .returning('*')) as GlobalFieldRow[];
    const updated = rows[0];
    if (updated === undefined) {
      return { field: viewOf(await requireRow(trx, profileFieldKey)), changed: false };
    }
    await bumpSchemaVersion(trx, GLOBAL_SCHEMA);
    return { field: viewOf(updated), changed: true };
  });
}
