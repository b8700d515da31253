import type { Request } from 'express';

/**
 * The path of the request without its query string: the query of the login flow carries
 * codes and state, so nothing that logs or traces a request may see it.
 */
export function requestPathWithoutQuery(req: Request): string {
  const target = req.originalUrl ?? req.url ?? '/';
  const queryStart = target.search(/[?#]/);
  return queryStart === -1 ? target : target.slice(0, queryStart);
}

/** The matched Express route (`/v1/platforms/:platformKey`), or undefined when none matched. */
export function matchedRoute(req: Request): string | undefined {
  const route: unknown = req.route;
  if (typeof route !== 'object' || route === null || !('path' in route)) return undefined;
  const { path } = route;
  if (typeof path !== 'string') return undefined;
  return `${req.baseUrl ?? ''}${path}`;
}
