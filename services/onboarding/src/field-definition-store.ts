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
  /**
   * Drops the changed scope from this process's schema cache, so this process's next read sees
   * its own change at once.
   */
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

/** A definition as every definition table stores it: field rules and a render position. */
type SortableDefinition = FieldRuleProperties & { sortOrder: number };

export function fieldDefinitionStore<
  Key,
  Definition extends SortableDefinition,
  Row extends StoredFieldRow<Definition>,
  View,
>(
  config: FieldDefinitionStoreConfig<Key, Definition, Row, View>,
): FieldDefinitionStore<Key, Definition, View> {
  return {
    list: (knex, filter) => listDefinitions(config, knex, filter),
    get: async (knex, key) => config.viewOf(await requireRow(config, knex, key)),
    create: (db, cache, key, definition) => createDefinition(config, db, cache, key, definition),
    update: (db, cache, key, active, patch) =>
      updateDefinition(config, db, cache, key, active, patch),
    archive: (db, cache, key) => archiveDefinition(config, db, cache, key),
  };
}

async function requireRow<K, D extends SortableDefinition, R extends StoredFieldRow<D>, V>(
  config: FieldDefinitionStoreConfig<K, D, R, V>,
  knex: Knex,
  key: K,
): Promise<R> {
  const row = (await knex(config.table).where(config.whereOf(key)).first()) as R | undefined;
  if (row === undefined) throw config.notFound(key);
  return row;
}

async function listDefinitions<K, D extends SortableDefinition, R extends StoredFieldRow<D>, V>(
  config: FieldDefinitionStoreConfig<K, D, R, V>,
  knex: Knex,
  filter: Record<string, string | boolean> | undefined,
): Promise<V[]> {
  const query = knex(config.table);
  if (filter !== undefined) void query.where(filter);
  const rows = (await query) as R[];
  return sortFieldDefinitions(
    rows.map((row) => ({
      row,
      sortOrder: row.definition.sortOrder,
      createdAt: row.created_at,
      fieldKey: config.fieldKeyOf(row),
    })),
  ).map(({ row }) => config.viewOf(row));
}

async function createDefinition<K, D extends SortableDefinition, R extends StoredFieldRow<D>, V>(
  config: FieldDefinitionStoreConfig<K, D, R, V>,
  db: Database,
  cache: SchemaCache,
  key: K,
  definition: D,
): Promise<V> {
  const now = new Date();
  try {
    const created = await db.knex.transaction(async (trx) => {
      const rows = (await trx(config.table)
        .insert({
          ...config.newRowColumns?.(),
          ...config.whereOf(key),
          definition: JSON.stringify(definition),
          active: true,
          created_at: now,
          updated_at: now,
        })
        .returning('*')) as R[];
      const row = rows[0];
      if (row === undefined) throw new Error('insert returned no row');
      await config.onChange(trx, key);
      return config.viewOf(row);
    });
    config.invalidate(cache, key);
    return created;
  } catch (error) {
    if (isUniqueViolation(error)) throw config.conflict(key);
    throw error;
  }
}

async function updateDefinition<K, D extends SortableDefinition, R extends StoredFieldRow<D>, V>(
  config: FieldDefinitionStoreConfig<K, D, R, V>,
  db: Database,
  cache: SchemaCache,
  key: K,
  active: boolean | undefined,
  patch: DefinitionPatch,
): Promise<{ field: V; changed: boolean }> {
  const { table, whereOf, viewOf } = config;
  const result = await db.knex.transaction(async (trx) => {
    const row = (await trx(table).where(whereOf(key)).forUpdate().first()) as R | undefined;
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
      .returning('*')) as R[];
    const updated = rows[0];
    if (updated === undefined) throw new Error('update returned no row');
    await config.onChange(trx, key);
    return { field: viewOf(updated), changed };
  });
  if (result.changed) config.invalidate(cache, key);
  return result;
}

async function archiveDefinition<K, D extends SortableDefinition, R extends StoredFieldRow<D>, V>(
  config: FieldDefinitionStoreConfig<K, D, R, V>,
  db: Database,
  cache: SchemaCache,
  key: K,
): Promise<{ field: V; changed: boolean }> {
  const result = await db.knex.transaction(async (trx) => {
    const rows = (await trx(config.table)
      .where({ ...config.whereOf(key), active: true })
      .update({ active: false, updated_at: new Date() })
      .returning('*')) as R[];
    const updated = rows[0];
    if (updated === undefined) {
      return { field: config.viewOf(await requireRow(config, trx, key)), changed: false };
    }
    await config.onChange(trx, key);
    return { field: config.viewOf(updated), changed: true };
  });
  if (result.changed) config.invalidate(cache, key);
  return result;
}
