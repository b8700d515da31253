import { GatewayError } from '@gateway/errors';

/**
 * Every rule of `returnTo` matching (spec 4.1.1), shared by login start (4.1) and logout
 * (4.6), plus the validation of a redirect pair's `returnUrl` root at registration (2.2).
 *
 * The approach is "reject early, then compare normalized values":
 *
 * 1. The raw string is screened before any parsing. Only printable ASCII (0x21-0x7E) is
 *    accepted, so control characters, whitespace (which the WHATWG parser silently strips)
 *    and every non-ASCII look-alike (U+3002, U+FF0E, U+FF0F, U+2215, ...) are refused;
 *    a browser or a later parser could read them as dots or slashes. Non-ASCII belongs in a
 *    returnTo only percent-encoded, and hosts only in punycode. A backslash, which browsers
 *    read as a slash, and a `#` are refused anywhere.
 * 2. Only two forms exist: `http(s)://authority...` with a non-empty authority free of `@`
 *    and `%`, and a root-relative path (`/` not followed by `/`). Anything else is
 *    INVALID_REDIRECT.
 * 3. The WHATWG URL parser normalizes the value (scheme and host lower-cased, default port
 *    dropped, IPv4 shorthands and IDNA resolved, dot segments removed, including the encoded
 *    `%2e` forms). The path is then decoded once and checked again, so that percent-encoded
 *    tricks (`/%2F/evil.com`, `/%5Cevil.com`, `/%09/x`, `/app%2f..%2fadmin`) never reach a
 *    platform that decodes paths before redirecting.
 * 4. The normalized origin must equal a root's origin exactly and the normalized pathname
 *    must equal the root path or lie under it on a `/` boundary; the longest root wins.
 */

export type RedirectPairForMatching = {
  id: string;
  returnUrl: string;
  callbackUrl: string;
  isDefault: boolean;
};

export type ReturnToMatch = {
  pair: RedirectPairForMatching;
  /** The normalized absolute URL (WHATWG `href`), query kept. */
  returnTo: string;
};

export type ReturnUrlRoot = { origin: string; path: string };

export const RETURN_TO_MAX_LENGTH = 2048;

const NOT_REGISTERED = 'returnTo is not registered for this platform.';

// Root-relative values are parsed against this base only to check their syntax; the match
// resolves them against the default pair's origin. `.invalid` can never be registered.
const SYNTAX_BASE = 'https://return-to.invalid';

/** A character outside printable ASCII, or a backslash. */
const RAW_DISALLOWED = /[^\x21-\x7e]|\\/;
/** `http://` or `https://`, any letter case. */
const ABSOLUTE_PREFIX = /^https?:\/\//i;
/** Control, format (bidi, zero-width), separator or white-space characters, or a backslash. */
const DECODED_DISALLOWED = /[\p{Cc}\p{Cf}\p{Z}\s\\]/u;
/** A second slash (or a slash look-alike) right after the leading one. */
const DOUBLE_SLASH_START = /^\/[/\\\u2044\u2215\u29f8\ufe68\uff0f\uff3c]/;

/**
 * Checks a `returnTo` value and picks the redirect pair it belongs to.
 *
 * Throws `INVALID_REDIRECT` for a malformed value and `FORBIDDEN` for a well-formed value
 * that no pair allowlists. Pairs whose own `returnUrl` is not a valid root are ignored: a
 * broken registration never allowlists anything.
 *
 * Reading of "a root-relative path is resolved against the default pair": the path is
 * resolved against the default pair's ORIGIN and the resulting URL is then matched against
 * all pairs with the same rules as an absolute URL. The same destination thus selects the
 * same pair (longest root) whichever form it is written in, and a root-relative path outside
 * every root on that origin is FORBIDDEN, also when it lies outside the default pair's path.
 */
export function matchReturnTo(
  returnTo: string,
  pairs: readonly RedirectPairForMatching[],
): ReturnToMatch {
  const syntax = parseReturnTo(returnTo);

  let url = syntax.url;
  if (syntax.rootRelative) {
    const defaultPair = pairs.find((pair) => pair.isDefault);
    const defaultRoot = defaultPair === undefined ? undefined : tryRoot(defaultPair.returnUrl);
    if (defaultRoot === undefined) {
      throw new GatewayError(
        'FORBIDDEN',
        'A root-relative returnTo needs a default redirect pair.',
      );
    }
    url = new URL(returnTo, defaultRoot.origin);
    // The path and query do not depend on the base, but the resolved value is checked again
    // so that no base can ever turn it into something the syntax check did not see.
    checkParsedReturnTo(url);
  }

  let best: { pair: RedirectPairForMatching; pathLength: number } | undefined;
  for (const pair of pairs) {
    const root = tryRoot(pair.returnUrl);
    if (root === undefined || root.origin !== url.origin || !isUnderPath(url.pathname, root.path)) {
      continue;
    }
    // Longest root path wins; on a tie (a duplicate registration) the default pair, then the
    // first one listed, keeps it.
    if (
      best === undefined ||
      root.path.length > best.pathLength ||
      (root.path.length === best.pathLength && pair.isDefault && !best.pair.isDefault)
    ) {
      best = { pair, pathLength: root.path.length };
    }
  }
  if (best === undefined) throw new GatewayError('FORBIDDEN', NOT_REGISTERED);
  return { pair: best.pair, returnTo: url.href };
}

/**
 * Validates a redirect pair's `returnUrl` at registration: an absolute http(s) URL without
 * userinfo, query or hash. Returns its normalized origin and its path without a trailing
 * slash (`/` for the root). Throws `VALIDATION_ERROR` otherwise.
 *
 * Non-ASCII hosts and paths are accepted here (an administrator may type an IDN host) and
 * come out normalized (punycode host, percent-encoded path); a returnTo must then use those
 * normalized forms.
 */
export function parseReturnUrlRoot(returnUrl: string): ReturnUrlRoot {
  const fail = (message: string): never => {
    throw new GatewayError('VALIDATION_ERROR', message);
  };
  if (typeof returnUrl !== 'string' || returnUrl.length < 1) {
    return fail('returnUrl must be an absolute http(s) URL.');
  }
  if (returnUrl.length > RETURN_TO_MAX_LENGTH) {
    return fail(`returnUrl must be at most ${RETURN_TO_MAX_LENGTH} characters.`);
  }
  if (/[\p{Cc}\p{Cf}\s\\]/u.test(returnUrl)) {
    return fail('returnUrl contains characters that are not allowed.');
  }
  if (returnUrl.includes('#')) return fail('returnUrl must not contain a fragment.');
  if (returnUrl.includes('?')) return fail('returnUrl must not contain a query.');
  const authority = absoluteAuthority(returnUrl);
  if (authority === undefined) return fail('returnUrl must be an absolute http(s) URL.');
  if (authority.includes('@')) return fail('returnUrl must not contain userinfo.');
  if (authority === '' || authority.includes('%')) return fail('returnUrl has an invalid host.');

  let url: URL;
  try {
    url = new URL(returnUrl);
  } catch {
    return fail('returnUrl is not a valid URL.');
  }
  const problem = parsedProblem(url);
  if (problem !== undefined) return fail(`returnUrl ${problem}.`);

  // An empty segment would make the `/` boundary rule ambiguous (`/app//`, `/a//b`).
  if (url.pathname.includes('//')) return fail('returnUrl has a path that is not allowed.');
  const path = url.pathname === '/' ? '/' : url.pathname.replace(/\/$/, '');
  return { origin: url.origin, path };
}

/** Whether `pathname` equals `rootPath` or lies beneath it on a `/` boundary. */
function isUnderPath(pathname: string, rootPath: string): boolean {
  if (rootPath === '/') return pathname.startsWith('/');
  return pathname === rootPath || pathname.startsWith(`${rootPath}/`);
}

type ParsedReturnTo = { url: URL; rootRelative: boolean };

function parseReturnTo(returnTo: string): ParsedReturnTo {
  const invalid = (message: string): never => {
    throw new GatewayError('INVALID_REDIRECT', message);
  };
  if (
    typeof returnTo !== 'string' ||
    returnTo.length < 1 ||
    returnTo.length > RETURN_TO_MAX_LENGTH
  ) {
    return invalid(`returnTo must be 1 to ${RETURN_TO_MAX_LENGTH} characters.`);
  }
  if (RAW_DISALLOWED.test(returnTo)) {
    return invalid('returnTo contains characters that are not allowed.');
  }
  if (returnTo.includes('#')) return invalid('returnTo must not contain a fragment.');

  const rootRelative = returnTo === '/' || (returnTo[0] === '/' && returnTo[1] !== '/');
  if (!rootRelative) {
    const authority = absoluteAuthority(returnTo);
    if (authority === undefined || authority === '') {
      return invalid('returnTo must be an absolute http(s) URL or a root-relative path.');
    }
    if (authority.includes('@')) return invalid('returnTo must not contain userinfo.');
    // The parser decodes `%2e` and friends inside a host; a host never needs a `%`.
    if (authority.includes('%')) return invalid('returnTo has an invalid host.');
  }

  let url: URL;
  try {
    url = rootRelative ? new URL(returnTo, SYNTAX_BASE) : new URL(returnTo);
  } catch {
    return invalid('returnTo is not a valid URL.');
  }
  checkParsedReturnTo(url);
  return { url, rootRelative };
}

/**
 * The authority of a raw `http(s)://` value (up to the first `/` or `?`; `#` and `\` are
 * refused before this is called), or undefined when the value does not start that way.
 */
function absoluteAuthority(raw: string): string | undefined {
  const prefix = ABSOLUTE_PREFIX.exec(raw);
  if (prefix === null) return undefined;
  const rest = raw.slice(prefix[0].length);
  const end = rest.search(/[/?#\\]/);
  return end === -1 ? rest : rest.slice(0, end);
}

function checkParsedReturnTo(url: URL): void {
  const problem = parsedProblem(url);
  if (problem !== undefined) throw new GatewayError('INVALID_REDIRECT', `returnTo ${problem}.`);
}

/** What is wrong with a parsed URL, as the end of a sentence, or undefined. */
function parsedProblem(url: URL): string | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return 'must be an absolute http(s) URL';
  }
  if (url.hostname === '') return 'has an invalid host';
  if (url.username !== '' || url.password !== '') return 'must not contain userinfo';
  if (url.hash !== '') return 'must not contain a fragment';
  if (!isSafePath(url.pathname)) return 'has a path that is not allowed';
  return undefined;
}

/**
 * Checks a WHATWG-normalized pathname, decoded once. The parser has already removed literal
 * and `%2e`-encoded dot segments; what is left to catch are encodings that a platform which
 * decodes its paths would read as a control character, white space, a backslash, a leading
 * `//` (a scheme-relative redirect to another host) or a dot segment hidden behind an
 * encoded slash (`/app%2f..%2fadmin` escaping the root `/app`) or behind path parameters
 * (`/app/..;/admin`). NFKC is applied as well, for platforms that fold fullwidth characters
 * (U+FF0E, U+FF0F, U+FF3C) into ASCII.
 */
function isSafePath(pathname: string): boolean {
  if (!pathname.startsWith('/')) return false;
  const decoded = percentDecodeOnce(pathname);
  for (const form of [decoded, decoded.normalize('NFKC')]) {
    if (DECODED_DISALLOWED.test(form) || DOUBLE_SLASH_START.test(form)) return false;
    if (form.split('/').some(isDotSegment)) return false;
  }
  return true;
}

/**
 * `.` or `..`, also with path parameters after a `;` (`..;`, `..;x=y`): servlet containers and
 * the proxies before them read `/app/..;/admin` as `/admin`.
 */
function isDotSegment(segment: string): boolean {
  const name = segment.split(';', 1)[0];
  return name === '.' || name === '..';
}

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder();

/** Decodes `%XX` sequences once, as UTF-8 (invalid bytes become U+FFFD). */
function percentDecodeOnce(value: string): string {
  const bytes: number[] = [];
  // With a capturing group, the odd-indexed parts are the `%XX` sequences.
  value.split(/(%[0-9a-f]{2})/i).forEach((part, index) => {
    if (index % 2 === 1) bytes.push(Number.parseInt(part.slice(1), 16));
    else bytes.push(...utf8Encoder.encode(part));
  });
  return utf8Decoder.decode(Uint8Array.from(bytes));
}

function tryRoot(returnUrl: string): ReturnUrlRoot | undefined {
  try {
    return parseReturnUrlRoot(returnUrl);
  } catch (error) {
    if (error instanceof GatewayError) return undefined;
    throw error;
  }
}
