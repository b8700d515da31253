import { randomBytes } from 'node:crypto';

/** Random lowercase hex, safe inside SQL identifiers and Redis glob patterns. */
export function randomHex(bytes = 6): string {
  return randomBytes(bytes).toString('hex');
}
