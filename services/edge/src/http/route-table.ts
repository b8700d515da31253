import { GatewayError } from '@gateway/errors';
import type { AnyOperation, ErrorBodyFormat } from './operation.js';

type PatternRoute = {
  method: string;
  pattern: RegExp;
  names: string[];
  operation: AnyOperation;
};

export type RouteMatch = { operation: AnyOperation; params: Record<string, string> };

/**
 * 400 VALIDATION_ERROR for a path of an operation whose parameter is not decodable; answered
 * in that operation's error format.
 */
export class UndecodablePathError extends GatewayError {
  readonly errorBody: ErrorBodyFormat | undefined;

  constructor(name: string, operation: AnyOperation) {
    super('VALIDATION_ERROR', 'Invalid request path.', {
      details: { issues: [{ location: 'path', path: name, message: 'is not decodable' }] },
    });
    this.errorBody = operation.errorBody;
  }
}

/**
 * Which operation serves a request: by method and path, a path parameter (`:name`) matching
 * one non-empty segment, a trailing `/` tolerated. HEAD is served by the GET operation (node
 * leaves the body out). Paths without parameters are found in one map look-up.
 */
export class RouteTable {
  private readonly exact = new Map<string, AnyOperation>();
  private readonly patterns: PatternRoute[] = [];

  add(operation: AnyOperation): void {
    const method = operation.method.toUpperCase();
    const names: string[] = [];
    const source = operation.path
      .split('/')
      .map((segment) => {
        if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        names.push(segment.slice(1));
        return '([^/]+)';
      })
      .join('/');
    if (names.length === 0) this.exact.set(`${method} ${operation.path}`, operation);
    this.patterns.push({ method, pattern: new RegExp(`^${source}/?$`), names, operation });
  }

  /** The operation for this method and path (without its query), or undefined. */
  match(requestMethod: string, path: string): RouteMatch | undefined {
    const method = requestMethod === 'HEAD' ? 'GET' : requestMethod;
    const operation = this.exact.get(`${method} ${path}`);
    if (operation !== undefined) return { operation, params: {} };
    for (const route of this.patterns) {
      if (route.method !== method) continue;
      const found = route.pattern.exec(path);
      if (found !== null) return { operation: route.operation, params: paramsOf(route, found) };
    }
    return undefined;
  }

  /** Methods served on this path, for 405 answers; empty when none. */
  allowedMethods(path: string): string[] {
    return this.patterns.filter((route) => route.pattern.test(path)).map((route) => route.method);
  }
}

function paramsOf(route: PatternRoute, found: RegExpExecArray): Record<string, string> {
  const params: Record<string, string> = {};
  route.names.forEach((name, index) => {
    const raw = found[index + 1] ?? '';
    try {
      params[name] = decodeURIComponent(raw);
    } catch {
      throw new UndecodablePathError(name, route.operation);
    }
  });
  return params;
}
