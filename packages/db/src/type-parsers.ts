// What services get back from a query is the same on both drivers. pg (node-postgres) and
// PGlite have different defaults; we configure both to the choices below:
//
//   PostgreSQL type         JavaScript value (both drivers)
//   timestamptz, timestamp  Date (default of both; prefer timestamptz: `timestamp` without
//                           zone is read as the Node process's local time by both)
//   int8 / bigint, count(*) number when within ±(2^53-1), else bigint (PGlite's default; pg
//                           would give a string). Use `toCount()` to read counts.
//   int8[]                  array of the same
//   numeric                 string (default of both; exact decimal)
//   date                    'YYYY-MM-DD' string (pg would give local midnight, PGlite UTC
//                           midnight, as Date)
//   interval                PostgreSQL text, e.g. '1 day' (pg would give an object)
//   bytea                   Buffer (PGlite would give a plain Uint8Array)
//   json, jsonb             parsed value (default of both)
//
// Sessions also run with TimeZone=UTC on both (PGlite's default; set for pg connections), so
// SQL that renders or truncates timestamps behaves the same.
import pg from 'pg';

const OID = {
  bytea: 17,
  int8: 20,
  int8Array: 1016,
  date: 1082,
  interval: 1186,
} as const;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);

export function parseInt8(text: string): number | bigint {
  const value = BigInt(text);
  return value > MAX_SAFE || value < MIN_SAFE ? value : Number(value);
}

function keepText(text: string): string {
  return text;
}

function parseByteaHex(text: string): Buffer {
  return Buffer.from(text.startsWith('\\x') ? text.slice(2) : text, 'hex');
}

type NestedArray<T> = Array<T | null | NestedArray<T>>;

function mapNested<T>(items: NestedArray<string>, parse: (text: string) => T): NestedArray<T> {
  return items.map((item) =>
    item === null ? null : Array.isArray(item) ? mapNested(item, parse) : parse(item),
  );
}

type TextParserLookup = (oid: number, format: 'text') => (value: string) => unknown;

// pg's own int8[] parser yields strings; we map them like single int8 values.
const parseInt8TextArray = (pg.types.getTypeParser as TextParserLookup)(OID.int8Array, 'text') as (
  value: string,
) => NestedArray<string>;

const pgTextParsers: Record<number, (text: string) => unknown> = {
  [OID.int8]: parseInt8,
  [OID.int8Array]: (text) => mapNested(parseInt8TextArray(text), parseInt8),
  [OID.date]: keepText,
  [OID.interval]: keepText,
};

/** Per-connection type parsers for node-postgres (does not touch pg's global defaults). */
export const pgTypes = {
  getTypeParser(oid: number, format: string = 'text'): (value: string) => unknown {
    if (format === 'text') {
      const custom = pgTextParsers[oid];
      if (custom) return custom;
    }
    return pg.types.getTypeParser(oid, format === 'binary' ? 'binary' : 'text') as (
      value: string,
    ) => unknown;
  },
};

/**
 * Parsers for the PGlite constructor. PGlite derives array parsers from these element parsers,
 * and its int8 default already matches ours.
 */
export const pgliteParsers: Record<number, (text: string) => unknown> = {
  [OID.int8]: parseInt8,
  [OID.date]: keepText,
  [OID.interval]: keepText,
  [OID.bytea]: parseByteaHex,
};

/** libpq-style startup options for pg connections. */
export const PG_SESSION_OPTIONS = '-c TimeZone=UTC';
