import { GatewayError } from '@gateway/errors';

/**
 * Headers a request may carry once (RFC 9110: a field that is not a list). Node's parser keeps
 * the first `Authorization`, `Content-Type` and `Host` in `req.headers` and drops the rest, so
 * a request with two of them would be read first-wins; the edge refuses it instead, whatever
 * the order: 400 VALIDATION_ERROR (spec 7). Two `Content-Length` headers are refused by the
 * parser itself before any listener runs (client-errors.ts answers that 400).
 */
const SINGLETON_HEADERS = ['authorization', 'content-type', 'content-length', 'host'] as const;

export type SingletonHeader = (typeof SINGLETON_HEADERS)[number];

/**
 * The first singleton header that `rawHeaders` (name, value, name, value, ...) repeats, or
 * undefined. One pass that allocates nothing: names are compared by length first, then
 * letter by letter without case.
 */
export function repeatedSingletonHeader(
  rawHeaders: readonly string[],
): SingletonHeader | undefined {
  let seen = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const bit = singletonBitOf(rawHeaders[index] ?? '');
    if (bit === 0) continue;
    if ((seen & bit) !== 0) return SINGLETON_HEADERS[Math.log2(bit)];
    seen |= bit;
  }
  return undefined;
}

/** Refuses a request that repeats a singleton header: 400 VALIDATION_ERROR naming it. */
export function assertSingletonHeadersOnce(rawHeaders: readonly string[]): void {
  const repeated = repeatedSingletonHeader(rawHeaders);
  if (repeated === undefined) return;
  throw new GatewayError('VALIDATION_ERROR', `The ${displayNames[repeated]} header is repeated.`, {
    details: { header: repeated },
  });
}

const displayNames: Record<SingletonHeader, string> = {
  authorization: 'Authorization',
  'content-type': 'Content-Type',
  'content-length': 'Content-Length',
  host: 'Host',
};

/** 1 << the index of `name` in SINGLETON_HEADERS, or 0 when it is none of them. */
function singletonBitOf(name: string): number {
  switch (name.length) {
    case 13:
      return equalsLowercase(name, 'authorization') ? 1 : 0;
    case 12:
      return equalsLowercase(name, 'content-type') ? 2 : 0;
    case 14:
      return equalsLowercase(name, 'content-length') ? 4 : 0;
    case 4:
      return equalsLowercase(name, 'host') ? 8 : 0;
    default:
      return 0;
  }
}

/** Whether `name` is `lowercase` in any case (ASCII; `lowercase` has letters and `-` only). */
function equalsLowercase(name: string, lowercase: string): boolean {
  for (let index = 0; index < lowercase.length; index += 1) {
    // Setting bit 0x20 lowercases an ASCII letter and leaves `-` as it is.
    if ((name.charCodeAt(index) | 0x20) !== lowercase.charCodeAt(index)) return false;
  }
  return true;
}
