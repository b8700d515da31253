import express, { type Express } from 'express';
import type { GatewayConfig } from '@gateway/config';
import {
  createHttpTracingMiddleware,
  createRequestIdMiddleware,
  createRequestLoggingMiddleware,
  type Logger,
} from '@gateway/telemetry';
import { createErrorHandler, createUnmatchedRouteHandler } from './http/error-handler.js';
import { OperationCatalog } from './http/operation-catalog.js';
import { registerDocsRoutes } from './routes/docs-routes.js';
import { registerHealthRoutes } from './routes/health-routes.js';
import type { EdgeClients } from './service-clients.js';

export type EdgeAppOptions = {
  config: GatewayConfig;
  logger: Logger;
  clients: EdgeClients;
};

/**
 * The public edge: every route of the spec, validated with zod, described in
 * /openapi.json, answering errors with the spec's body. It keeps no state; the services do.
 */
export function createEdgeApp(options: EdgeAppOptions): Express {
  const { config, logger, clients } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(createRequestIdMiddleware());
  app.use(createHttpTracingMiddleware());
  app.use(createRequestLoggingMiddleware(logger));

  const catalog = new OperationCatalog();
  const router = express.Router();
  registerHealthRoutes(router, catalog, clients, { probeTimeoutMs: config.databaseTimeoutMs });
  registerDocsRoutes(router, catalog, { baseUrl: config.baseUrl });
  app.use(router);

  app.use(createUnmatchedRouteHandler(catalog));
  app.use(createErrorHandler(logger));
  return app;
}
