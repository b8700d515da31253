import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@connectrpc/connect';
import type { RegistryService } from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import type { Logger } from '@gateway/telemetry';
import { NO_STORE } from '../http/cache-policy.js';
import type { EdgePage } from '../http/edge-server.js';
import { writeErrorAnswer } from '../http/error-handler.js';
import { readSessionToken } from '../http/session-cookie.js';
import {
  ADMIN_CONSOLE_CALLBACK_PATH,
  ADMIN_CONSOLE_PATH,
  ADMIN_CONSOLE_PLATFORM_KEY,
  consoleUrl,
  ensureConsolePlatform,
} from './console-platform.js';
import { setConsoleHeaders } from './console-headers.js';

/**
 * The console's built files (services/admin-console/dist/web). This module sits at the same
 * depth in src/ (tsx, Jest) and dist/ (the image), so one relative path serves both.
 */
export const ADMIN_CONSOLE_ASSETS_DIR = fileURLToPath(
  new URL('../../../admin-console/dist/web/', import.meta.url),
);

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};
const IMMUTABLE = 'public, max-age=31536000, immutable';

export type AdminConsolePagesOptions = {
  baseUrl: string;
  registry: Pick<Client<typeof RegistryService>, 'getPlatform' | 'createPlatform'>;
  logger: Logger;
  assetsDir?: string;
};

/**
 * The admin console at `{base_url}/admin/`: a static web app built by services/admin-console
 * and served from its files, no second server. Its files under /admin/assets/ have content
 * hashes in their names and are kept for a year; every other path below /admin/ is the
 * app's page (it routes in the browser). `/admin/sign-in` starts a sign-in through the
 * console's platform (console-platform.ts) and its callback returns to the console.
 */
export function createAdminConsolePages(options: AdminConsolePagesOptions): EdgePage[] {
  const assetsDir = options.assetsDir ?? ADMIN_CONSOLE_ASSETS_DIR;
  return [
    { path: '/admin', serve: redirectTo(ADMIN_CONSOLE_PATH) },
    { path: '/admin/sign-in', serve: startConsoleSignIn(options) },
    // The handoff code is not needed: the gateway cookie is set. It leaves the address bar.
    { path: ADMIN_CONSOLE_CALLBACK_PATH, serve: redirectTo(ADMIN_CONSOLE_PATH) },
    { path: '/admin/assets/', serve: serveAsset(assetsDir, options.logger) },
    { path: ADMIN_CONSOLE_PATH, serve: serveConsolePage(assetsDir, options.logger) },
  ];
}

function redirectTo(location: string): RequestListener {
  return (_req, res) => {
    setConsoleHeaders(res);
    res.setHeader('Cache-Control', NO_STORE);
    res.writeHead(302, { Location: location }).end();
  };
}

function startConsoleSignIn(options: AdminConsolePagesOptions): RequestListener {
  return (req, res) => {
    void (async () => {
      try {
        const requestId = String(res.getHeader('x-request-id') ?? randomUUID());
        const state = await ensureConsolePlatform(options.registry, options.baseUrl, requestId);
        if (state === 'inactive') {
          throw new GatewayError(
            'NOT_FOUND',
            `The console's platform ${ADMIN_CONSOLE_PLATFORM_KEY} is deactivated or archived: ` +
              'activate it through the admin API to sign in here.',
          );
        }
        const start = new URL('/v1/auth/start', consoleUrl(options.baseUrl, '/'));
        start.searchParams.set('platformKey', ADMIN_CONSOLE_PLATFORM_KEY);
        start.searchParams.set('returnTo', consoleUrl(options.baseUrl, ADMIN_CONSOLE_PATH));
        redirectTo(start.toString())(req, res);
      } catch (error) {
        writeErrorAnswer(res, error, options.logger, '/admin/sign-in', { accountUrl: undefined });
      }
    })();
  };
}

/**
 * The console's own routes below /admin/: plain segments of letters, digits, `_` and `-`
 * (`platforms/SHOP`, `audit`), at most one trailing `/`. Anything else (a `.` or `..`
 * segment, an encoded character such as `%2e%2e` or `%2f`, a backslash, an empty segment) is
 * no page of the console: 404, so no path outside its files is ever answered with content.
 */
const CONSOLE_ROUTE = /^\/admin\/(?:[A-Za-z0-9_-]+(?:\/[A-Za-z0-9_-]+)*\/?)?$/;

/**
 * Told to the console's page when the request carries no gateway session cookie: the app
 * then shows its sign-in page without asking `/v1/users/me`, whose 401 a browser would log
 * as an error on every signed-out visit. A cookie of a session that has ended is still asked
 * about (the app says the session has ended).
 */
export const NO_SESSION_META = '<meta name="gateway-session" content="none" />';

/** The page as read, and the same page with NO_SESSION_META at the end of its head. */
type ConsolePage = { signedIn: Buffer; signedOut: Buffer };

function consolePageOf(body: Buffer): ConsolePage {
  const text = body.toString('utf8');
  const head = text.indexOf('</head>');
  if (head < 0) return { signedIn: body, signedOut: body };
  const signedOut = `${text.slice(0, head)}${NO_SESSION_META}\n  ${text.slice(head)}`;
  return { signedIn: body, signedOut: Buffer.from(signedOut) };
}

function serveConsolePage(assetsDir: string, logger: Logger): RequestListener {
  let page: Promise<ConsolePage> | undefined;
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (!CONSOLE_ROUTE.test(path)) {
      writeErrorAnswer(res, new GatewayError('NOT_FOUND', 'No such page.'), logger, path);
      return;
    }
    void (async () => {
      page ??= readFile(join(assetsDir, 'index.html'))
        .then(consolePageOf)
        .catch((error: unknown) => {
          page = undefined;
          throw error;
        });
      try {
        const pages = await page;
        const body = readSessionToken(req) === undefined ? pages.signedOut : pages.signedIn;
        setConsoleHeaders(res);
        res.writeHead(200, {
          'Content-Type': 'text/html; charset=utf-8',
          'Cache-Control': NO_STORE,
          'Content-Length': body.length,
        });
        res.end(body);
      } catch (error) {
        logger.warn({ err: error, assetsDir }, 'the admin console is not built');
        answerNotBuilt(res);
      }
    })();
  };
}

function serveAsset(assetsDir: string, logger: Logger): RequestListener {
  const root = join(assetsDir, 'assets');
  return (req, res) => {
    void (async () => {
      const file = assetFile(root, req);
      const type = file === undefined ? undefined : CONTENT_TYPES[extname(file)];
      const size = file === undefined ? undefined : await fileSize(file);
      if (file === undefined || type === undefined || size === undefined) {
        writeErrorAnswer(
          res,
          new GatewayError('NOT_FOUND', 'No such file.'),
          logger,
          req.url ?? '',
        );
        return;
      }
      setConsoleHeaders(res);
      res.writeHead(200, {
        'Content-Type': type,
        'Cache-Control': IMMUTABLE,
        'Content-Length': size,
      });
      if (req.method === 'HEAD') return void res.end();
      createReadStream(file).pipe(res);
    })();
  };
}

/** The file below `root` that the request names, or undefined for anything else. */
function assetFile(root: string, req: IncomingMessage): string | undefined {
  const path = (req.url ?? '').split('?')[0] ?? '';
  let name: string;
  try {
    name = decodeURIComponent(path.slice('/admin/assets/'.length));
  } catch {
    return undefined;
  }
  if (name === '' || name.includes('\0') || name.includes('/') || name.includes('\\')) {
    return undefined;
  }
  const file = normalize(join(root, name));
  return file.startsWith(root + sep) ? file : undefined;
}

async function fileSize(file: string): Promise<number | undefined> {
  try {
    const found = await stat(file);
    return found.isFile() ? found.size : undefined;
  } catch {
    return undefined;
  }
}

/** A checkout where the console was never built: say how to build it. */
function answerNotBuilt(res: ServerResponse): void {
  const body =
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Admin console</title>' +
    '</head><body><h1>The admin console is not built</h1><p>Build it with ' +
    '<code>npx -y pnpm@10.34.9 build</code> (or <code>npx -y pnpm@10.34.9 install</code>) ' +
    'and reload this page.</p></body></html>';
  setConsoleHeaders(res);
  res.writeHead(503, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': NO_STORE });
  res.end(body);
}
