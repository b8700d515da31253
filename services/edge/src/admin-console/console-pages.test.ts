import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, request, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createClient, createRouterTransport } from '@connectrpc/connect';
import { routesOf } from '@gateway/rpc';
import { RegistryService } from '@gateway/contracts';
import { createLogger } from '@gateway/telemetry';
import { startTestEdge, type TestEdge } from '../testing/edge-harness.js';
import {
  ADMIN_CONSOLE_ASSETS_DIR,
  createAdminConsolePages,
  NO_SESSION_META,
} from './console-pages.js';

// The edge's /admin/ over real HTTP: the built console (services/admin-console/dist/web,
// which `pnpm install` builds) with its strict policy and caching, requests that try to
// leave the built folder, and a checkout where the console was never built. Requests go out
// as written (node:http), since fetch would resolve `..` before sending.

type Answer = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
};

let edge: TestEdge;
let repositoryPackageJson: string;

beforeAll(async () => {
  edge = await startTestEdge({ IDENTITY_ISSUER: 'https://id.example.test/env/PROD' });
  repositoryPackageJson = await readFile(
    join(ADMIN_CONSOLE_ASSETS_DIR, '../../../../package.json'),
    'utf8',
  );
});

afterAll(async () => {
  await edge?.close();
});

/** One request with its target exactly as given. */
function send(
  base: string,
  target: string,
  method = 'GET',
  headers: Record<string, string> = {},
): Promise<Answer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const outgoing = request({ hostname, port, path: target, method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

const directives = (answer: Answer) =>
  String(answer.headers['content-security-policy'] ?? '')
    .split(';')
    .map((directive) => directive.trim());

describe("the edge's /admin/ serving", () => {
  it('answers the page with the strict policy, no framing and no-store, on every console route', async () => {
    for (const target of ['/admin/', '/admin/platforms/SHOP', '/admin/audit?target=SHOP']) {
      const page = await send(edge.url, target);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.body).toContain('<div id="root"></div>');
      expect(directives(page)).toEqual(
        expect.arrayContaining([
          "default-src 'self'",
          "script-src 'self'",
          "style-src 'self'",
          "frame-ancestors 'none'",
          "object-src 'none'",
          "base-uri 'none'",
        ]),
      );
      expect(page.headers['content-security-policy']).not.toMatch(/unsafe-inline|unsafe-eval/);
      expect(page.headers['x-frame-options']).toBe('DENY');
      expect(page.headers['referrer-policy']).toBe('no-referrer');
      expect(page.headers['cache-control']).toBe('no-store');
    }
    expect((await send(edge.url, '/admin')).headers.location).toBe('/admin/');
  });

  it('tells the page when the request carries no session cookie, so the app asks nothing it would be refused', async () => {
    const signedOut = await send(edge.url, '/admin/');
    expect(signedOut.body).toContain(NO_SESSION_META);
    expect(signedOut.headers['content-length']).toBe(String(Buffer.byteLength(signedOut.body)));
    const withCookie = await send(edge.url, '/admin/', 'GET', {
      cookie: 'svc_auth_session=gst_token',
    });
    expect(withCookie.status).toBe(200);
    expect(withCookie.body).not.toContain('gateway-session');
    expect(withCookie.body).toContain('<div id="root"></div>');
  });

  it('keeps the hashed script and stylesheet for a year, under the same policy', async () => {
    const page = await send(edge.url, '/admin/');
    const assets = [...page.body.matchAll(/(?:src|href)="(\/admin\/assets\/[^"]+)"/g)].map(
      (match) => match[1] ?? '',
    );
    expect(assets.some((path) => /\/index-[\w-]+\.js$/.test(path))).toBe(true);
    expect(assets.some((path) => /\/index-[\w-]+\.css$/.test(path))).toBe(true);
    for (const path of assets) {
      const asset = await send(edge.url, path);
      expect(asset.status).toBe(200);
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(asset.headers['content-type']).toMatch(/^text\/(javascript|css); charset=utf-8$/);
      expect(asset.headers['content-security-policy']).toBe(
        page.headers['content-security-policy'],
      );
      const head = await send(edge.url, path, 'HEAD');
      expect(head.status).toBe(200);
      expect(head.body).toBe('');
    }
  });

  it.each([
    '/admin/../package.json',
    '/admin/../../../package.json',
    '/admin/%2e%2e/package.json',
    '/admin/%2E%2E/%2E%2E/package.json',
    '/admin/.%2e/package.json',
    '/admin/..%2fpackage.json',
    '/admin/platforms/..%5c..%5cpackage.json',
    '/admin//etc/passwd',
    '/admin/%2fetc%2fpasswd',
    '/admin/./',
    '/admin/index.html',
    '/admin/assets/../index.html',
    '/admin/assets/../../../../package.json',
    '/admin/assets/%2e%2e/%2e%2e/%2e%2e/%2e%2e/package.json',
    '/admin/assets/..%2f..%2f..%2f..%2fpackage.json',
    '/admin/assets/%2e%2e',
    '/admin/assets/.',
    '/admin/assets/',
    '/admin/assets//etc/passwd',
    '/admin/assets/%2Fetc%2Fpasswd',
    '/admin/assets/..%5c..%5cpackage.json',
    '/admin/assets/C:%5cWindows%5cwin.ini',
    '/admin/assets/%00index.js',
    '/admin/assets/%E0%A4%A',
  ])('answers %s with 404 and nothing from outside the built folder', async (target) => {
    const answer = await send(edge.url, target);
    expect(answer.status).toBe(404);
    expect(answer.body).not.toContain('<div id="root">');
    expect(answer.body).not.toContain(repositoryPackageJson.slice(0, 40));
    expect(answer.body).not.toContain('root:');
  });
});

describe('a checkout where the console was never built', () => {
  let emptyDir: string;
  let server: Server;
  let url: string;

  beforeAll(async () => {
    emptyDir = await mkdtemp(join(tmpdir(), 'admin-console-unbuilt-'));
    // The console's pages as the edge mounts them (edge-server.ts: a page ending in `/`
    // serves everything below it), on a folder without a build.
    const pages = createAdminConsolePages({
      baseUrl: 'http://localhost:8080',
      registry: createClient(
        RegistryService,
        createRouterTransport(routesOf([edge.registry.implementation])),
      ),
      logger: createLogger({ service: 'test', level: 'silent' }),
      assetsDir: emptyDir,
    });
    const listener: RequestListener = (req, res) => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const page = pages.find((item) =>
        item.path.endsWith('/') ? path.startsWith(item.path) : path === item.path,
      );
      if (page === undefined) res.writeHead(404).end();
      else page.serve(req, res);
    };
    server = createServer(listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await rm(emptyDir, { recursive: true, force: true });
  });

  it('says how to build it (503, not stored, under the same policy) and serves no asset', async () => {
    const page = await send(url, '/admin/');
    expect(page.status).toBe(503);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['content-security-policy']).not.toMatch(/unsafe-inline/);
    expect(page.body).toContain('The admin console is not built');
    expect(page.body).toContain('npx -y pnpm@10.34.9 build');
    expect((await send(url, '/admin/assets/index.js')).status).toBe(404);
    expect((await send(url, '/admin/../package.json')).status).toBe(404);
  });
});
