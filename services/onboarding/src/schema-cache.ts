import {
  sortFieldDefinitions,
  type FieldValueRules,
  type RequirementField,
} from '@gateway/field-rules';
import type { StoredGlobalDefinition } from './global-fields.js';
import type { StoredDefinition } from './platform-fields.js';

// The active field definitions of the global schema and of each platform, kept in
// this process with the requirementVersion they were read at. Never per-user values.
//
// - Every reader reads the current requirementVersions in the same statement as the user's
//   values (onboarding-state.ts) and uses an entry only when its version is that version, so
//   a change committed by any process (each change moves the version up in its own
//   transaction, spec 3.6) is seen by the next read.
// - This process's own schema writes drop the scope's entry at once (field-definition-store).
// - Entries also expire after `ttlMs` (at most 5 s): the bound for a change that did not move
//   the version (a hand edit in SQL), in split mode as everywhere.

/** Longest an entry is kept (at most 5 s). */
export const MAX_SCHEMA_CACHE_TTL_MS = 5_000;
/** Most platform schemas kept; beyond it the oldest entry goes first. */
const MAX_PLATFORM_ENTRIES = 1_000;

export type GlobalSchemaField = {
  profileFieldKey: string;
  definition: StoredGlobalDefinition;
  createdAt: Date;
};

export type PlatformSchemaField = {
  id: string;
  fieldKey: string;
  definition: StoredDefinition;
  createdAt: Date;
};

/** One scope's active fields in render order, with what evaluation derives from them. */
export type ScopeSchema<Field> = {
  version: number;
  fields: readonly Field[];
  /** The fields as missingRequiredFields takes them (keyed by their field key). */
  requirements: readonly RequirementField[];
};

export type GlobalSchema = ScopeSchema<GlobalSchemaField>;
export type PlatformSchema = ScopeSchema<PlatformSchemaField>;

const requirementOf = (definition: FieldValueRules & { required: boolean }, fieldKey: string) => ({
  ...definition,
  fieldKey,
});

export function globalSchemaOf(
  version: number,
  fields: readonly GlobalSchemaField[],
): GlobalSchema {
  const sorted = sortFieldDefinitions(
    fields.map((field) => ({
      field,
      sortOrder: field.definition.sortOrder,
      createdAt: field.createdAt,
      fieldKey: field.profileFieldKey,
    })),
  ).map(({ field }) => field);
  return {
    version,
    fields: sorted,
    requirements: sorted.map((field) => requirementOf(field.definition, field.profileFieldKey)),
  };
}

export function platformSchemaOf(
  version: number,
  fields: readonly PlatformSchemaField[],
): PlatformSchema {
  const sorted = sortFieldDefinitions(
    fields.map((field) => ({
      field,
      sortOrder: field.definition.sortOrder,
      createdAt: field.createdAt,
      fieldKey: field.fieldKey,
    })),
  ).map(({ field }) => field);
  return {
    version,
    fields: sorted,
    requirements: sorted.map((field) => requirementOf(field.definition, field.fieldKey)),
  };
}

type Entry<S> = { schema: S; expiresAt: number };

export type SchemaCacheOptions = {
  /** At most MAX_SCHEMA_CACHE_TTL_MS (the default); 0 keeps nothing. */
  ttlMs?: number;
  now?: () => number;
};

export class SchemaCache {
  readonly #ttlMs: number;
  readonly #now: () => number;
  #global: Entry<GlobalSchema> | undefined;
  readonly #platforms = new Map<string, Entry<PlatformSchema>>();

  constructor(options: SchemaCacheOptions = {}) {
    const ttlMs = options.ttlMs ?? MAX_SCHEMA_CACHE_TTL_MS;
    if (!(ttlMs >= 0 && ttlMs <= MAX_SCHEMA_CACHE_TTL_MS)) {
      throw new RangeError(`schema cache TTL must be 0..${MAX_SCHEMA_CACHE_TTL_MS} ms`);
    }
    this.#ttlMs = ttlMs;
    this.#now = options.now ?? Date.now;
  }

  /** The kept global schema, unless it expired. */
  global(): GlobalSchema | undefined {
    const entry = this.#global;
    if (entry === undefined) return undefined;
    if (entry.expiresAt > this.#now()) return entry.schema;
    this.#global = undefined;
    return undefined;
  }

  /** The kept schema of `platformKey`, unless it expired. */
  platform(platformKey: string): PlatformSchema | undefined {
    const entry = this.#platforms.get(platformKey);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > this.#now()) return entry.schema;
    this.#platforms.delete(platformKey);
    return undefined;
  }

  keepGlobal(schema: GlobalSchema): void {
    if (this.#ttlMs === 0) return;
    this.#global = { schema, expiresAt: this.#now() + this.#ttlMs };
  }

  keepPlatform(platformKey: string, schema: PlatformSchema): void {
    if (this.#ttlMs === 0) return;
    this.#platforms.delete(platformKey);
    if (this.#platforms.size >= MAX_PLATFORM_ENTRIES) {
      const oldest = this.#platforms.keys().next();
      if (oldest.done !== true) this.#platforms.delete(oldest.value);
    }
    this.#platforms.set(platformKey, { schema, expiresAt: this.#now() + this.#ttlMs });
  }

  /** Drops the global schema (this process changed a global field). */
  invalidateGlobal(): void {
    this.#global = undefined;
  }

  /** Drops a platform's schema (this process changed one of its fields). */
  invalidatePlatform(platformKey: string): void {
    this.#platforms.delete(platformKey);
  }
}
