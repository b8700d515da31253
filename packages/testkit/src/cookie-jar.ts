/**
 * Just enough of a browser's cookie store to walk through an identity provider's login
 * pages with fetch: cookies are kept per (name, path), sent on requests under their path,
 * and dropped when the server expires them. Domains are not checked (one host per jar).
 */
export type CookieJar = {
  /** The Cookie header for a URL, or undefined when no cookie applies. */
  headerFor(url: string | URL): string | undefined;
  /** Stores the Set-Cookie headers of a response to a request for `url`. */
  store(url: string | URL, response: { headers: Pick<Headers, 'getSetCookie'> }): void;
};

type StoredCookie = { name: string; value: string; path: string };

export function createCookieJar(): CookieJar {
  const cookies = new Map<string, StoredCookie>();
  return {
    headerFor(url) {
      const { pathname } = new URL(url);
      const matching = [...cookies.values()]
        .filter((cookie) => pathMatches(pathname, cookie.path))
        .sort((a, b) => b.path.length - a.path.length);
      if (matching.length === 0) return undefined;
      return matching.map((cookie) => `${cookie.name}=${cookie.value}`).join('; ');
    },
    store(url, response) {
      for (const line of response.headers.getSetCookie()) {
        const parsed = parseSetCookie(line, new URL(url).pathname);
        if (parsed === undefined) continue;
        const key = `${parsed.cookie.name};${parsed.cookie.path}`;
        if (parsed.expired) cookies.delete(key);
        else cookies.set(key, parsed.cookie);
      }
    },
  };
}

function parseSetCookie(
  line: string,
  requestPath: string,
): { cookie: StoredCookie; expired: boolean } | undefined {
  const [pair = '', ...attributes] = line.split(';');
  const separator = pair.indexOf('=');
  if (separator <= 0) return undefined;
  const name = pair.slice(0, separator).trim();
  const value = pair.slice(separator + 1).trim();
  let path = defaultPath(requestPath);
  let expired = false;
  for (const attribute of attributes) {
    const [rawKey = '', ...rest] = attribute.split('=');
    const key = rawKey.trim().toLowerCase();
    const attributeValue = rest.join('=').trim();
    if (key === 'path' && attributeValue.startsWith('/')) path = attributeValue;
    if (key === 'max-age' && Number(attributeValue) <= 0) expired = true;
    if (key === 'expires' && Date.parse(attributeValue) <= Date.now()) expired = true;
  }
  return { cookie: { name, value, path }, expired };
}

// RFC 6265 section 5.1.4.
function defaultPath(requestPath: string): string {
  const lastSlash = requestPath.lastIndexOf('/');
  return lastSlash <= 0 ? '/' : requestPath.slice(0, lastSlash);
}

function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/';
}
