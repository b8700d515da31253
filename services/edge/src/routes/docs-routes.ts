import express, { type Router } from 'express';
import { getAbsoluteFSPath } from 'swagger-ui-dist';
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

/** Spec 4 and 9: the OpenAPI 3.1 document at /openapi.json and an interactive UI at /docs. */
export function registerDocsRoutes(
  router: Router,
  catalog: OperationCatalog,
  options: { baseUrl: string },
): void {
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(catalog.openApiJson({ baseUrl: options.baseUrl }));
  });
  router.get('/docs', (_req, res) => {
    res
      .type('html')
      .setHeader(
        'Content-Security-Policy',
        "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'",
      )
      .send(docsPage);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('application/javascript').send(docsInit);
  });
  router.use(
    '/docs/assets',
    express.static(getAbsoluteFSPath(), { index: false, fallthrough: false, maxAge: '1h' }),
  );
}
