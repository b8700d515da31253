import { isUniqueViolation, type Database } from '@gateway/db';
import type { GatewayError } from '@gateway/errors';
import {
  mergeFieldDefinitionPatch,
  sortFieldDefinitions,
  type FieldDefinitionPatch,
  type FieldRuleProperties,
  type GlobalFieldDefinitionPatch,
} from '@gateway/field-rules';
import type { Knex } from 'knex';
import { invalidDefinition } from './definition-errors.js';
import type { SchemaCache } from './schema-cache.js';

// The storage mechanism shared by the platform and global field definition modules (spec
// 2.10, 3.6, 4.13): load, create, patch and archive one table of definitions, running the
// scope's schema change (at least a version bump) in the same transaction as every change,
// and dropping the scope from this process's schema cache once that transaction committed.

/** The columns every definition table has besides its key columns. */
export type StoredFieldRow<Definition> = {
  definition: Definition;
  active: boolean;
  created_at: Date;
  updated_at: Date;
};

/** A parsed PATCH body without `active`, as mergeFieldDefinitionPatch takes it. */
export type DefinitionPatch =
  Omit<FieldDefinitionPatch, 'active'> | Omit<GlobalFieldDefinitionPatch, 'active'>;

export type FieldDefinitionStoreConfig<
  Key,
  Definition extends FieldRuleProperties & { sortOrder: number },
  Row extends StoredFieldRow<Definition>,
  View,
> = {
  table: string;
  /** The key columns that identify one definition. */
  whereOf: (key: Key) => Record<string, string>;
  /** Columns a new row gets besides its key columns (e.g. a generated id). */
  newRowColumns?: () => Record<string, string>;
  /** The tie-breaking key of the render order. */
  fieldKeyOf: (row: Row) => string;
  viewOf: (row: Row) => View;
  notFound: (key: Key) => GatewayError;
  conflict: (key: Key) => GatewayError;
  /** Spec 3.6: what every create, update, archive or restore does besides the definition. */
  onChange: (trx: Knex.Transaction, key: Key) => Promise<void>;
  /** Drops the changed scope from this process's schema cache (issue 8). */
  invalidate: (cache: SchemaCache, key: Key) => void;
};

export type FieldDefinitionStore<Key, Definition, View> = {
  /** Every matching definition, archived included unless filtered, in render order. */
  list: (knex: Knex, filter?: Record<string, string | boolean>) => Promise<View[]>;
  get: (knex: Knex, key: Key) => Promise<View>;
  /** A duplicate key is 409 CONFLICT. */
  create: (db: Database, cache: SchemaCache, key: Key, definition: Definition) => Promise<View>;
  /** `changed` is false when nothing differs from what was stored. */
  update: (
    db: Database,
    cache: SchemaCache,
    key: Key,
    active: boolean | undefined,
    patch: DefinitionPatch,
  ) => Promise<{ field: View; changed: boolean }>;
  /** Soft archive; `changed` is false when already archived. */
  archive: (
    db: Database,
    cache: SchemaCache,
    key: Key,
  ) => Promise<{ field: View; changed: boolean }>;
};

export function fieldDefinitionStore<
  Key,
  Definition extends FieldRuleProperties & { sortOrder: number },
  Row extends StoredFieldRow<Definition>,
  View,
>(
  config: FieldDefinitionStoreConfig<Key, Definition, Row, View>,
): FieldDefinitionStore<Key, Definition, View> {
  const { table, whereOf, viewOf } = config;

  async function requireRow(knex: Knex, key: Key): Promise<Row> {
    const row = (await knex(table).where(whereOf(key)).first()) as Row | undefined;
    if (row === undefined) throw config.notFound(key);
    return row;
  }

  return {
    async list(knex, filter) {
      const query = knex(table);
      if (filter !== undefined) void query.where(filter);
      const rows = (await query) as Row[];
      return sortFieldDefinitions(
        rows.map((row) => ({
          row,
          sortOrder: row.definition.sortOrder,
          createdAt: row.created_at,
          fieldKey: config.fieldKeyOf(row),
        })),
      ).map(({ row }) => viewOf(row));
    },

    async get(knex, key) {
      return viewOf(await requireRow(knex, key));
    },

    async create(db, cache, key, definition) {
      const now = new Date();
      try {
        const created = await db.knex.transaction(async (trx) => {
          const rows = (await trx(table)
            .insert({
              ...config.newRowColumns?.(),
              ...whereOf(key),
              definition: JSON.stringify(definition),
              active: true,
              created_at: now,
              updated_at: now,
            })
            .returning('*')) as Row[];
          const row = rows[0];
          if (row === undefined) throw new Error('insert returned no row');
          await config.onChange(trx, key);
          return viewOf(row);
        });
        config.invalidate(cache, key);
        return created;
      } catch (error) {
        if (isUniqueViolation(error)) throw config.conflict(key);
        throw error;
      }
    },

    async update(db, cache, key, active, patch) {
      const result = await db.knex.transaction(async (trx) => {
        const row = (await trx(table).where(whereOf(key)).forUpdate().first()) as Row | undefined;
        if (row === undefined) throw config.notFound(key);
        const merged = mergeFieldDefinitionPatch(row.definition, patch);
        if (!merged.ok) throw invalidDefinition(merged.issues);
        const nextActive = active ?? row.active;
        const changed =
          nextActive !== row.active ||
          JSON.stringify(merged.definition) !== JSON.stringify(row.definition);
        if (!changed) return { field: viewOf(row), changed };
        const rows = (await trx(table)
          .where(whereOf(key))
          .update({
            definition: JSON.stringify(merged.definition),
            active: nextActive,
            updated_at: new Date(),
          })
          .returning('*')) as Row[];
        const updated = rows[0];
        if (updated === undefined) throw new Error('update returned no row');
        await config.onChange(trx, key);
        return { field: viewOf(updated), changed };
      });
      if (result.changed) config.invalidate(cache, key);
      return result;
    },

    async archive(db, cache, key) {
      const result = await db.knex.transaction(async (trx) => {
        const rows = (await trx(table)
          .where({ ...whereOf(key), active: true })
          .update({ active: false, updated_at: new Date() })
          .returning('*')) as Row[];
        const updated = rows[0];
        if (updated === undefined) {
          return { field: viewOf(await requireRow(trx, key)), changed: false };
        }
        await config.onChange(trx, key);
        return { field: viewOf(updated), changed: true };
      });
      if (result.changed) config.invalidate(cache, key);
      return result;
    },
  };
}
