import { randomUUID } from 'node:crypto';
import type { JsonObject } from '@bufbuild/protobuf';
import type { Database } from '@gateway/db';
import { GatewayError } from '@gateway/errors';
import {
  fieldDefinitionPatchSchema,
  fieldDefinitionSchema,
  type FieldDefinition,
} from '@gateway/field-rules';
import { parsedDefinition } from './definition-errors.js';
import { fieldDefinitionStore } from './field-definition-store.js';
import { reopenCompleteMemberships } from './memberships.js';
import type { SchemaCache } from './schema-cache.js';
import { bumpSchemaVersion, platformSchema } from './schema-versions.js';

// Spec 2.10-2.13, 3.6, 4.13: a platform's onboarding field definitions. Every rule on a
// definition lives in @gateway/field-rules; this module stores and loads them. Each change
// moves the platform's requirementVersion up and its COMPLETE memberships to IN_PROGRESS in
// the same transaction (spec 3.6).

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

type FieldKey = { platformKey: string; fieldKey: string };

export type PlatformFieldView = {
  id: string;
  platformKey: string;
  fieldKey: string;
  active: boolean;
  definition: StoredDefinition;
  createdAt: Date;
  updatedAt: Date;
};

const store = fieldDefinitionStore<FieldKey, StoredDefinition, FieldRow, PlatformFieldView>({
  table: 'onboarding.field_definitions',
  whereOf: ({ platformKey, fieldKey }) => ({ platform_key: platformKey, field_key: fieldKey }),
  newRowColumns: () => ({ id: randomUUID() }),
  fieldKeyOf: (row) => row.field_key,
  viewOf: (row) => ({
    id: row.id,
    platformKey: row.platform_key,
    fieldKey: row.field_key,
    active: row.active,
    definition: row.definition,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  }),
  notFound: ({ platformKey, fieldKey }) =>
    new GatewayError('NOT_FOUND', `Platform ${platformKey} has no field ${fieldKey}.`),
  conflict: ({ platformKey, fieldKey }) => {
    const message = `Platform ${platformKey} already has a field ${fieldKey}.`;
    return new GatewayError('CONFLICT', message, {
      details: { issues: [{ location: 'body', path: 'fieldKey', message }] },
    });
  },
  onChange: async (trx, { platformKey }) => {
    await bumpSchemaVersion(trx, platformSchema(platformKey));
    await reopenCompleteMemberships(trx, platformKey);
  },
  invalidate: (cache, { platformKey }) => cache.invalidatePlatform(platformKey),
});

/** Spec 4.13: every definition of the platform, archived included, in render order. */
export async function listPlatformFields(
  db: Database,
  platformKey: string,
): Promise<PlatformFieldView[]> {
  return store.list(db.knex, { platform_key: platformKey });
}

export async function getPlatformField(
  db: Database,
  platformKey: string,
  fieldKey: string,
): Promise<PlatformFieldView> {
  return store.get(db.knex, { platformKey, fieldKey });
}

/** Spec 4.13 create: defaults applied; a duplicate fieldKey is 409 CONFLICT. */
export async function createPlatformField(
  db: Database,
  cache: SchemaCache,
  platformKey: string,
  body: JsonObject | undefined,
): Promise<PlatformFieldView> {
  const { fieldKey, ...definition } = parsedDefinition(fieldDefinitionSchema.safeParse(body ?? {}));
  return store.create(db, cache, { platformKey, fieldKey }, definition);
}

/**
 * Spec 4.13 PATCH: mutable properties and `active` (fieldKey is immutable: 400). The
 * cross-property rules are checked on the merged definition. `changed` is false when nothing
 * differs from what was stored.
 */
export async function updatePlatformField(
  db: Database,
  cache: SchemaCache,
  platformKey: string,
  fieldKey: string,
  body: JsonObject | undefined,
): Promise<{ field: PlatformFieldView; changed: boolean }> {
  const { active, ...patch } = parsedDefinition(fieldDefinitionPatchSchema.safeParse(body ?? {}));
  return store.update(db, cache, { platformKey, fieldKey }, active, patch);
}

/** Spec 3.6 DELETE: soft archive (values kept). `changed` is false when already archived. */
export async function archivePlatformField(
  db: Database,
  cache: SchemaCache,
  platformKey: string,
  fieldKey: string,
): Promise<{ field: PlatformFieldView; changed: boolean }> {
  return store.archive(db, cache, { platformKey, fieldKey });
}
