import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import { GatewayError } from '@gateway/errors';
import { setHttpSpanName } from '@gateway/telemetry';
import { readJsonBody } from './json-body.js';
import type { OperationCatalog } from './operation-catalog.js';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type AnyObjectSchema = z.ZodType<Record<string, unknown>>;

export type OperationInput<
  Q extends AnyObjectSchema | undefined,
  P extends AnyObjectSchema | undefined,
  B extends z.ZodType | undefined,
> = {
  query: Q extends z.ZodType ? z.output<Q> : undefined;
  params: P extends z.ZodType ? z.output<P> : undefined;
  body: B extends z.ZodType ? z.output<B> : undefined;
};

/**
 * One operation of the public contract: its OpenAPI description and its handler are
 * declared together from the same zod schemas, so `/openapi.json` cannot drift from what
 * the edge accepts. Spec section 4 gives every operation a stable operationId; it names the
 * route's trace span too.
 */
export type OperationDefinition<
  Q extends AnyObjectSchema | undefined,
  P extends AnyObjectSchema | undefined,
  B extends z.ZodType | undefined,
> = {
  operationId: string;
  method: Method;
  /** Express-style path, e.g. `/v1/platforms/:platformKey`. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  security?: RouteConfig['security'];
  query?: Q;
  params?: P;
  body?: B;
  /** Largest accepted JSON body in bytes (default 64 KiB). */
  bodyLimitBytes?: number;
  /**
   * The OpenAPI description of a body that is not JSON (an image upload); without `body`
   * nothing reads it before the handler, which reads it itself (raw-body.ts).
   */
  rawBody?: NonNullable<RouteConfig['request']>['body'];
  responses: RouteConfig['responses'];
  handler: (input: OperationInput<Q, P, B>, req: Request, res: Response) => Promise<void> | void;
};

export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** Registers an operation on the router and in the catalog that feeds /openapi.json. */
export function defineOperation<
  Q extends AnyObjectSchema | undefined = undefined,
  P extends AnyObjectSchema | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(router: Router, catalog: OperationCatalog, operation: OperationDefinition<Q, P, B>): void {
  catalog.add(operation);
  const handle: RequestHandler = async (req: Request, res: Response, next: NextFunction) => {
    setHttpSpanName(res, operation.operationId);
    try {
      const input = {
        query: operation.query ? parseInput(operation.query, req.query, 'query') : undefined,
        params: operation.params ? parseInput(operation.params, req.params, 'path') : undefined,
        body: operation.body
          ? parseInput(
              operation.body,
              await readJsonBody(req, operation.bodyLimitBytes ?? 64 * 1024),
              'body',
            )
          : undefined,
      } as OperationInput<Q, P, B>;
      await operation.handler(input, req, res);
    } catch (error) {
      next(error);
    }
  };
  router[operation.method](operation.path, handle);
}

/** Validates one part of a request; a failure is 400 VALIDATION_ERROR naming each issue. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  location: string,
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new GatewayError('VALIDATION_ERROR', `Invalid request ${location}.`, {
    details: {
      issues: result.error.issues.map((issue) => ({
        location,
        path: issue.path.map(String).join('.'),
        message: issue.message,
      })),
    },
  });
}
