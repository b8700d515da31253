import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import express, { type ErrorRequestHandler } from 'express';
import { getAbsoluteFSPath } from 'swagger-ui-dist';
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

const DOCS_CONTENT_SECURITY_POLICY =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'";

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
    writeErrorAnswer(res, error, options.logger, req.path);
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

/** Browsers ask every host for an icon; the gateway has none, and says so without a 404. */
function answerWithoutIcon(_req: IncomingMessage, res: ServerResponse): void {
  setIconAbsenceCachePolicy(res);
  res.statusCode = 204;
  res.end();
}
