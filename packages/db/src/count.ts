/**
 * Reads a `count(*)` (or any int8) result as a number, whichever driver produced it: our type
 * parsers give a number for values up to 2^53-1 and a bigint beyond; a string (e.g. from a
 * raw query on a connection without our parsers) is accepted too.
 */
export function toCount(value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'bigint' && isSafe(value)) return Number(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value) && isSafe(BigInt(value))) {
    return Number(value);
  }
  throw new TypeError(`Not a count that fits in a number: ${String(value)}`);
}

function isSafe(value: bigint): boolean {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER);
}
