import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import express, { type ErrorRequestHandler } from 'express';
import { getAbsoluteFSPath } from 'swagger-ui-dist';
import { GatewayError } from '@gateway/errors';
import type { Logger } from '@gateway/telemetry';
import { DOCS_ASSET_MAX_AGE, setIconAbsenceCachePolicy } from '../http/cache-policy.js';
import type { EdgePage } from '../http/edge-server.js';
import { writeErrorAnswer } from '../http/error-handler.js';
import type { OperationCatalog } from '../http/operation-catalog.js';

const docsPage = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>Central Authentication Gateway API</title>
    <link rel="stylesheet" href="/docs/assets/swagger-ui.css" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/assets/swagger-ui-bundle.js"></script>
    <script src="/docs/init.js"></script>
  </body>
</html>
`;

// Served as a file rather than inline so the page works under a strict CSP (script-src 'self').
const docsInit = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: false,
});
`;

// The page runs with the reader's gateway cookie: no other site may frame it (clickjacking).
const DOCS_CONTENT_SECURITY_POLICY =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; " +
  "frame-ancestors 'none'";

/**
 * Spec 4 and 9: the OpenAPI 3.1 document at /openapi.json and an interactive UI at /docs,
 * whose static files are what Express serves (ranges, conditional requests). No operation
 * runs here: these are pages, served beside the operation runner (edge-server.ts).
 */
export function createDocsPages(
  catalog: OperationCatalog,
  options: { baseUrl: string; logger: Logger },
): EdgePage[] {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Older browsers know only X-Frame-Options; the document and its assets are never framed.
  app.use((_req, res, next) => {
    res.setHeader('X-Frame-Options', 'DENY');
    next();
  });
  app.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(catalog.openApiJson({ baseUrl: options.baseUrl }));
  });
  app.get('/docs', (_req, res) => {
    res.type('html').setHeader('Content-Security-Policy', DOCS_CONTENT_SECURITY_POLICY);
    res.send(docsPage);
  });
  app.get('/docs/init.js', (_req, res) => {
    res.type('application/javascript').send(docsInit);
  });
  app.use(
    '/docs/assets',
    express.static(getAbsoluteFSPath(), {
      index: false,
      fallthrough: false,
      maxAge: DOCS_ASSET_MAX_AGE,
    }),
  );
  const answerWithErrorBody: ErrorRequestHandler = (error: unknown, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    writeErrorAnswer(res, staticFileError(error), options.logger, req.path);
  };
  app.use(answerWithErrorBody);
  const serve: RequestListener = (req, res) => void app(req, res);
  return [
    { path: '/openapi.json', serve },
    { path: '/docs', serve },
    { path: '/docs/init.js', serve },
    { path: '/docs/assets/', serve },
    { path: '/favicon.ico', serve: answerWithoutIcon },
  ];
}

/**
 * The static file server refuses a path it cannot serve (malformed percent-encoding, U+0000, a
 * dot segment, a missing file) with an HTTP error of status 4xx: the caller's mistake, answered
 * as such rather than as an unexpected failure.
 */
function staticFileError(error: unknown): unknown {
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status !== 'number' || status < 400 || status >= 500) return error;
  if (status === 404) return new GatewayError('NOT_FOUND', 'No such file.');
  if (status === 405) return new GatewayError('METHOD_NOT_ALLOWED', 'Only GET and HEAD.');
  return new GatewayError('VALIDATION_ERROR', 'Invalid request path.');
}

/** Browsers ask every host for an icon; the gateway has none, and says so without a 404. */
function answerWithoutIcon(_req: IncomingMessage, res: ServerResponse): void {
  setIconAbsenceCachePolicy(res);
  res.statusCode = 204;
  res.end();
}
