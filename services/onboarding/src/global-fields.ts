import type { Knex } from 'knex';
import type { JsonObject } from '@bufbuild/protobuf';
import type { Database } from '@gateway/db';
import { GatewayError } from '@gateway/errors';
import {
  globalFieldDefinitionPatchSchema,
  globalFieldDefinitionSchema,
  type GlobalFieldDefinition,
} from '@gateway/field-rules';
import { parsedDefinition } from './definition-errors.js';
import { fieldDefinitionStore } from './field-definition-store.js';
import type { SchemaCache } from './schema-cache.js';
import { bumpSchemaVersion, GLOBAL_SCHEMA } from './schema-versions.js';

// Spec 2.10 (last paragraph), 4.13 global fields: definitions keyed by the canonical profile
// key, collected from every user of every platform. Each change moves the global
// requirement version up in the same transaction. Nothing is required until one is created
// with `required: true`; saved profile values stay when a field is archived.

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

const store = fieldDefinitionStore<string, StoredGlobalDefinition, GlobalFieldRow, GlobalFieldView>(
  {
    table: 'onboarding.global_field_definitions',
    whereOf: (profileFieldKey) => ({ profile_field_key: profileFieldKey }),
    fieldKeyOf: (row) => row.profile_field_key,
    viewOf: (row) => ({
      profileFieldKey: row.profile_field_key,
      active: row.active,
      definition: row.definition,
      createdAt: new Date(row.created_at),
      updatedAt: new Date(row.updated_at),
    }),
    notFound: (key) => new GatewayError('NOT_FOUND', `There is no global field ${key}.`),
    conflict: (key) => {
      const message = `A global field for ${key} already exists.`;
      return new GatewayError('CONFLICT', message, {
        details: { issues: [{ location: 'body', path: 'profileFieldKey', message }] },
      });
    },
    onChange: async (trx) => {
      await bumpSchemaVersion(trx, GLOBAL_SCHEMA);
    },
    invalidate: (cache) => cache.invalidateGlobal(),
  },
);

/** Every global field, archived included, in render order. */
export async function listGlobalFields(knex: Knex): Promise<GlobalFieldView[]> {
  return store.list(knex);
}

export async function getGlobalField(
  db: Database,
  profileFieldKey: string,
): Promise<GlobalFieldView> {
  return store.get(db.knex, profileFieldKey);
}

/** Spec 4.13 create: a second definition of the same profile key is 409 CONFLICT. */
export async function createGlobalField(
  db: Database,
  cache: SchemaCache,
  body: JsonObject | undefined,
): Promise<GlobalFieldView> {
  const definition = (({ fieldKey: _implied, ...rest }: GlobalFieldDefinition) => rest)(
    parsedDefinition(globalFieldDefinitionSchema.safeParse(body ?? {})),
  );
  return store.create(db, cache, definition.profileFieldKey, definition);
}

/** Spec 4.13 PATCH: descriptive properties and `active` (true restores). */
export async function updateGlobalField(
  db: Database,
  cache: SchemaCache,
  profileFieldKey: string,
  body: JsonObject | undefined,
): Promise<{ field: GlobalFieldView; changed: boolean }> {
  const { active, ...patch } = parsedDefinition(
    globalFieldDefinitionPatchSchema.safeParse(body ?? {}),
  );
  return store.update(db, cache, profileFieldKey, active, patch);
}

/** Spec 4.13 DELETE: soft archive; saved profile values are kept. */
export async function archiveGlobalField(
  db: Database,
  cache: SchemaCache,
  profileFieldKey: string,
): Promise<{ field: GlobalFieldView; changed: boolean }> {
  return store.archive(db, cache, profileFieldKey);
}
