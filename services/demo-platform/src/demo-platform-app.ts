import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import {
  createGatewayPlatform,
  gatewayAuth,
  GatewayPlatformError,
  getSignedIn,
  isGatewayUnavailable,
  requireSignIn,
  type GatewayPlatform,
  type SignedIn,
} from '@gateway/platform-sdk';
import {
  errorPage,
  favicon,
  homePage,
  signedInPage,
  stylesheet,
  type DemoPaths,
  type SessionsView,
} from './pages.js';

export type DemoPlatformOptions = {
  /** The gateway's public base URL, e.g. http://localhost:8080. */
  gatewayUrl: string;
  /** The platform key registered at the gateway, e.g. DEMO. */
  platformKey: string;
  /** The BFF key of the redirect pair whose callback is `<publicOrigin>/auth/callback`. */
  bffKey: { clientId: string; clientSecret: string };
  /** Optional backend key (introspection only). */
  backendKey?: { clientId: string; clientSecret: string };
  /** Where browsers reach this platform, e.g. http://localhost:3000 (its redirect pair's root). */
  publicOrigin: string;
  /** The identity environment this platform is bound to (spec 4.4); default PROD. */
  expectedEnvironment?: string;
  /** Replaces global fetch toward the gateway (tests). */
  fetch?: typeof fetch;
  /** Where refused sign-ins and failures are reported; default stderr. */
  log?: (line: string) => void;
};

const paths: DemoPaths = {
  loginPath: '/auth/login',
  logoutPath: '/auth/logout',
  signedInPath: '/me',
  signOutOthersPath: '/me/sign-out-others',
};

/**
 * The demo platform: a small Express app that does what spec 1 asks of a platform (the
 * start redirect, its callback, the server-to-server exchange and logout) with nothing but
 * `@gateway/platform-sdk`, and shows what the exchange returned.
 */
export function createDemoPlatformApp(options: DemoPlatformOptions): Express {
  const publicOrigin = new URL(options.publicOrigin).origin;
  const gatewayOrigin = new URL(options.gatewayUrl).origin;
  const secure = publicOrigin.startsWith('https:');
  const log = options.log ?? ((line: string) => process.stderr.write(`demo platform: ${line}\n`));
  const platform = createGatewayPlatform({
    gatewayUrl: options.gatewayUrl,
    platformKey: options.platformKey,
    bffKey: options.bffKey,
    ...(options.backendKey === undefined ? {} : { backendKey: options.backendKey }),
    expectedEnvironment: options.expectedEnvironment ?? 'PROD',
    // Every page asks the gateway (no introspection cache): a session ended elsewhere, by a
    // sign-out at the identity service (back-channel logout) or an admin's revocation, shows
    // on the next page. A busy platform keeps the SDK's cache (45 s, spec 4.5).
    introspectCacheSeconds: 0,
    pendingCookie: { secure },
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });

  const app = express();
  app.disable('x-powered-by');
  app.use(securityHeaders(gatewayOrigin));
  app.get('/styles.css', (_req, res) => {
    res.type('text/css').setHeader('Cache-Control', 'public, max-age=300').send(stylesheet);
  });
  // Every page names its icon; a browser that asks for /favicon.ico anyway gets it too, so
  // that no page logs a 404 in the console.
  app.get(['/favicon.svg', '/favicon.ico'], (_req, res) => {
    res.type('image/svg+xml').setHeader('Cache-Control', 'public, max-age=86400').send(favicon);
  });
  app.use(
    gatewayAuth(platform, {
      loginPath: paths.loginPath,
      callbackPath: '/auth/callback',
      logoutPath: paths.logoutPath,
      afterLogoutPath: '/',
      // The Origin of logout and the base of returnTo: the redirect pair's origin, whatever
      // Host header a request arrives with.
      origin: publicOrigin,
      sessionCookie: { secure },
      onError: (error) => log(`sign-in or sign-out refused: ${describe(error)}`),
    }),
  );
  app.get('/', (_req, res) => {
    res.type('html').send(homePage(paths));
  });
  app.get(paths.signedInPath, requireSignIn(), async function showSignedInUser(req, res) {
    const signedIn = getSignedIn(res);
    if (signedIn === undefined) {
      res.redirect(303, '/');
      return;
    }
    const sessions: SessionsView = {
      list: await sessionsOf(platform, signedIn, log),
      ended: endedCount(req.query.ended),
    };
    res.setHeader('Cache-Control', 'no-store');
    res.type('html').send(signedInPage(paths, signedIn, sessions));
  });
  app.post(
    paths.signOutOthersPath,
    refuseCrossSite(publicOrigin),
    requireSignIn(),
    async function signOutEverywhereElse(_req, res) {
      const signedIn = getSignedIn(res);
      res.setHeader('Cache-Control', 'no-store');
      if (signedIn === undefined) {
        res.redirect(303, '/');
        return;
      }
      let ended: number;
      try {
        ({ revokedSessions: ended } = await platform.endOtherSessions({
          gatewayToken: signedIn.result.session.gatewayToken,
          origin: publicOrigin,
        }));
      } catch (error) {
        // 401: this session ended meanwhile; /me asks the gateway again and signs the user out.
        if (error instanceof GatewayPlatformError && error.status === 401) {
          res.redirect(303, paths.signedInPath);
          return;
        }
        throw error;
      }
      res.redirect(303, `${paths.signedInPath}?ended=${ended}`);
    },
  );
  app.use(function notFound(_req, res) {
    res.status(404).type('html').send(errorPage(404, 'There is no page at this address.'));
  });
  app.use(renderErrorWith(log));
  return app;
}

/**
 * The user's live sessions for /me, or undefined when the gateway does not list them now:
 * the page shows everything else all the same, with a short note.
 */
async function sessionsOf(
  platform: GatewayPlatform,
  signedIn: SignedIn,
  log: (line: string) => void,
): Promise<SessionsView['list']> {
  try {
    return await platform.listSessions(signedIn.result.session.gatewayToken);
  } catch (error) {
    log(`the session list failed: ${describe(error)}`);
    return undefined;
  }
}

/** `?ended=<n>` of the redirect after "Sign out everywhere else": how many sessions ended. */
function endedCount(value: unknown): number | undefined {
  return typeof value === 'string' && /^\d{1,6}$/.test(value) ? Number(value) : undefined;
}

/**
 * The CSRF check the SDK's logout route makes, for the demo's own form: a POST whose Origin
 * is another site's is refused (browsers send Origin on every POST). The platform session
 * cookie is SameSite=Lax as well, so a cross-site POST carries no session either.
 */
function refuseCrossSite(publicOrigin: string): RequestHandler {
  return function refuseCrossSitePost(req, res, next) {
    const sent = req.get('origin');
    if (sent !== undefined && sent !== publicOrigin) {
      res.status(403).type('html').send(errorPage(403, 'This form was sent from another site.'));
      return;
    }
    next();
  };
}

/**
 * No scripts at all, styles from this origin, forms only to this origin and the gateway
 * (logout redirects the browser on to the identity service's end-session page there).
 */
function securityHeaders(gatewayOrigin: string): RequestHandler {
  const policy = [
    "default-src 'none'",
    "style-src 'self'",
    'img-src * data:',
    `form-action 'self' ${gatewayOrigin}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  return function setSecurityHeaders(_req, res, next) {
    res.setHeader('Content-Security-Policy', policy);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // Not no-referrer: with it, browsers send `Origin: null` on the logout form's POST, which
    // the SDK refuses as cross-site. same-origin keeps URLs from the gateway all the same.
    res.setHeader('Referrer-Policy', 'same-origin');
    next();
  };
}

function renderErrorWith(log: (line: string) => void): ErrorRequestHandler {
  return function renderError(error: unknown, _req, res, next) {
    if (res.headersSent) {
      next(error);
      return;
    }
    const status = statusOf(error);
    if (status >= 500) log(describe(error));
    const message =
      status >= 500
        ? 'The demo platform could not finish this request. Try again in a moment.'
        : 'The request could not be handled.';
    res.status(status).type('html').send(errorPage(status, message));
  };
}

/** An error for the log: its code and message (the SDK's messages carry no secrets). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? `${code}: ${error.message}` : error.message;
}

function statusOf(error: unknown): number {
  // An SDK error's status is the gateway's answer to this platform (401: our key was
  // refused), not one for the browser: the gateway down is 503, anything else our fault.
  if (error instanceof GatewayPlatformError) return isGatewayUnavailable(error) ? 503 : 500;
  const candidate =
    typeof error === 'object' && error !== null
      ? ((error as { status?: unknown; statusCode?: unknown }).status ??
        (error as { statusCode?: unknown }).statusCode)
      : undefined;
  return typeof candidate === 'number' && candidate >= 400 && candidate < 600 ? candidate : 500;
}
