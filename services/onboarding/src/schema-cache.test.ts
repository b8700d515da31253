// The bound on how long this process keeps the active field definitions.
import { describe, expect, it } from '@jest/globals';
import { globalFieldDefinitionSchema } from '@gateway/field-rules';
import { globalSchemaOf, MAX_SCHEMA_CACHE_TTL_MS, SchemaCache } from './schema-cache.js';

describe('SchemaCache', () => {
  // A definition as the create endpoint stores it (defaults applied by the real parser).
  const { fieldKey, ...definition } = globalFieldDefinitionSchema.parse({
    profileFieldKey: 'nickname',
    label: 'Nickname',
    fieldType: 'TEXT',
    required: true,
  });
  const schema = globalSchemaOf(3, [
    { profileFieldKey: fieldKey, definition, createdAt: new Date(0) },
  ]);

  it('keeps a schema for its TTL and no longer', () => {
    let now = 1_000;
    const cache = new SchemaCache({ ttlMs: MAX_SCHEMA_CACHE_TTL_MS, now: () => now });
    cache.keepGlobal(schema);
    cache.keepPlatform('APP', { version: 1, fields: [], requirements: [] });
    now += MAX_SCHEMA_CACHE_TTL_MS - 1;
    expect(cache.global()).toBe(schema);
    expect(cache.platform('APP')?.version).toBe(1);
    now += 1;
    expect(cache.global()).toBeUndefined();
    expect(cache.platform('APP')).toBeUndefined();
  });

  it('drops a scope at once when this process changes it', () => {
    const cache = new SchemaCache();
    cache.keepGlobal(schema);
    cache.keepPlatform('APP', { version: 1, fields: [], requirements: [] });
    cache.keepPlatform('OTHER', { version: 4, fields: [], requirements: [] });
    cache.invalidatePlatform('APP');
    expect(cache.platform('APP')).toBeUndefined();
    expect(cache.platform('OTHER')?.version).toBe(4);
    expect(cache.global()).toBe(schema);
    cache.invalidateGlobal();
    expect(cache.global()).toBeUndefined();
  });

  it('refuses a TTL above 5 s; 0 keeps nothing', () => {
    expect(() => new SchemaCache({ ttlMs: MAX_SCHEMA_CACHE_TTL_MS + 1 })).toThrow(RangeError);
    const cache = new SchemaCache({ ttlMs: 0 });
    cache.keepGlobal(schema);
    expect(cache.global()).toBeUndefined();
  });
});
