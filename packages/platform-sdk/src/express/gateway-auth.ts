import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { deleteCookie, isCookieName, readCookie, serializeCookie } from '../cookies.js';
import { GatewayPlatformError } from '../errors.js';
import type { GatewayPlatform } from '../gateway-platform.js';
import type { ExchangeResult } from '../gateway-types.js';
import type { OnboardingMode } from '../start-login.js';
import { attachAuthContext } from './auth-context.js';
import { createPlatformSessions, type PlatformSessions } from './platform-sessions.js';
import { isOrigin, localPath, requestOrigin } from './request-origin.js';
import { createMemorySessionStore, type SessionStore } from './session-store.js';

export type GatewayAuthOptions = {
  /** GET; query `returnTo` (a local path), `screen=up` for sign-up. Default `/auth/login`. */
  loginPath?: string;
  /** The redirect pair's callback path. Default `/auth/callback`. */
  callbackPath?: string;
  /** POST. Default `/auth/logout`. */
  logoutPath?: string;
  /** Where the browser goes after logout when the gateway gives no logoutUrl. Default `/`. */
  afterLogoutPath?: string;
  /**
   * `returnTo` sent to the gateway on logout: where the identity end-session returns to
   * (spec 4.6). Default none: the platform's default redirect pair's return URL.
   */
  logoutReturnTo?: string;
  /**
   * This site's origin as the browser sees it, e.g. `https://shop.example`: the `Origin` of
   * logout and the base of returnTo at login. Default: the request's protocol and Host.
   */
  origin?: string;
  /** Asserted on start (spec 4.1): must equal the platform's defaultOnboardingMode. */
  onboardingMode?: OnboardingMode;
  sessionCookie?: {
    /** Default `platform_session`. */
    name?: string;
    /** Default platform.settings.secureCookies (gatewayUrl is https). */
    secure?: boolean;
  };
  /** Default: in memory (createMemorySessionStore). */
  store?: SessionStore;
  /**
   * Told about failures the user only sees as a short page (refused callbacks, failed
   * logouts), for logging. Must not throw.
   */
  onError?: (error: unknown, req: Request) => void;
};

type ResolvedOptions = {
  loginPath: string;
  callbackPath: string;
  logoutPath: string;
  afterLogoutPath: string;
  logoutReturnTo: string | undefined;
  origin: string | undefined;
  onboardingMode: OnboardingMode | undefined;
  onError: (error: unknown, req: Request) => void;
};

function invalid(setting: string, rule: string): never {
  throw new GatewayPlatformError('INVALID_OPTIONS', `gatewayAuth: ${setting} ${rule}`);
}

function pathOption(setting: string, value: string | undefined, fallback: string): string {
  const path = value ?? fallback;
  if (localPath(path) !== path) invalid(setting, `must be a local path like ${fallback}`);
  return path;
}

function resolveOptions(options: GatewayAuthOptions): ResolvedOptions {
  if (options.origin !== undefined && !isOrigin(options.origin)) {
    invalid('origin', 'must be a scheme://host[:port] origin without a path');
  }
  return {
    loginPath: pathOption('loginPath', options.loginPath, '/auth/login'),
    callbackPath: pathOption('callbackPath', options.callbackPath, '/auth/callback'),
    logoutPath: pathOption('logoutPath', options.logoutPath, '/auth/logout'),
    afterLogoutPath: pathOption('afterLogoutPath', options.afterLogoutPath, '/'),
    logoutReturnTo: options.logoutReturnTo,
    origin: options.origin,
    onboardingMode: options.onboardingMode,
    onError: options.onError ?? (() => undefined),
  };
}

/** Status and page text of a refused callback: no detail beyond what the user can act on. */
function callbackFailure(error: GatewayPlatformError): { status: number; text: string } {
  switch (error.code) {
    case 'GATEWAY_UNAVAILABLE':
      return { status: 503, text: 'Sign-in is temporarily unavailable. Please try again.' };
    case 'LOGIN_NOT_PENDING':
    case 'LOGIN_NOT_THIS_BROWSER':
    case 'UNEXPECTED_ENVIRONMENT':
    case 'UNEXPECTED_PLATFORM':
      return { status: 403, text: 'This sign-in was not started here. Please sign in again.' };
    default:
      // 401/403 from the gateway: this platform's own key was refused (a set-up error).
      if (
        error.status === 401 ||
        error.status === 403 ||
        error.code === 'INVALID_GATEWAY_RESPONSE'
      ) {
        return { status: 500, text: 'Sign-in is not available at the moment.' };
      }
      // INVALID_CODE, the gateway's NOT_FOUND (expired or used code) once the browser was
      // sent to sign in again already, VALIDATION_ERROR.
      return {
        status: 400,
        text: 'This sign-in link is invalid or has expired. Please sign in again.',
      };
  }
}

function sendText(res: Response, status: number, text: string): void {
  res.status(status).type('text/plain').send(text);
}

type RouteHandler = (req: Request, res: Response) => Promise<void> | void;

/**
 * Whether `req.path` (relative to where the middleware is mounted) is `path`, with one
 * trailing slash tolerated as Express routes do.
 */
function isPath(req: Request, path: string): boolean {
  return req.path === path || req.path === `${path}/`;
}

/**
 * Express 5 middleware: the login, callback and logout routes of spec 1 (start redirect,
 * callback with server-to-server exchange, logout), and the platform's own session. Mount it
 * before the routes that use requireSignIn: `app.use(gatewayAuth(platform))`.
 *
 * It loads nothing from express at run time (express is an optional peer dependency, its
 * types are all the SDK uses): it answers its three routes itself and passes every other
 * request on.
 */
export function gatewayAuth(
  platform: GatewayPlatform,
  options: GatewayAuthOptions = {},
): RequestHandler {
  const settings = resolveOptions(options);
  const cookieName = options.sessionCookie?.name ?? 'platform_session';
  if (!isCookieName(cookieName)) invalid('sessionCookie.name', 'must be a cookie name (RFC 6265)');
  const sessions = createPlatformSessions(options.store ?? createMemorySessionStore(), {
    name: cookieName,
    secure: options.sessionCookie?.secure ?? platform.settings.secureCookies,
  });

  const startSignIn = startSignInRoute(platform, settings);
  const finishSignIn = finishSignInRoute(platform, settings, sessions);
  const signOut = signOutRoute(platform, settings, sessions);

  function routeOf(req: Request): RouteHandler | undefined {
    if ((req.method === 'GET' || req.method === 'HEAD') && isPath(req, settings.loginPath)) {
      return startSignIn;
    }
    // GET only: a HEAD from a link prefetcher must not spend the one-time code.
    if (req.method === 'GET' && isPath(req, settings.callbackPath)) return finishSignIn;
    if (req.method === 'POST' && isPath(req, settings.logoutPath)) return signOut;
    return undefined;
  }

  return function gatewayAuthMiddleware(req: Request, res: Response, next: NextFunction) {
    // req.baseUrl is the mount path, so requireSignIn finds the login route.
    attachAuthContext(req, {
      platform,
      sessions,
      loginPath: `${req.baseUrl}${settings.loginPath}`,
    });
    const route = routeOf(req);
    if (route === undefined) {
      next();
      return;
    }
    Promise.resolve()
      .then(() => route(req, res))
      .catch(next);
  };
}

/** Spec 4.1: the start redirect, with the pending cookie (login CSRF, spec 4.4). */
function startSignInRoute(platform: GatewayPlatform, settings: ResolvedOptions): RouteHandler {
  return function startSignIn(req, res) {
    const origin = requestOrigin(req, settings.origin);
    if (origin === undefined) {
      sendText(res, 400, 'Bad request.');
      return;
    }
    const returnTo = new URL(localPath(req.query.returnTo) ?? '/', origin).href;
    const { url, setCookie } = platform.startLogin({
      returnTo,
      defaultScreen: req.query.screen === 'up' ? 'up' : 'in',
      ...(settings.onboardingMode === undefined ? {} : { onboardingMode: settings.onboardingMode }),
    });
    res.set('Cache-Control', 'no-store').append('Set-Cookie', setCookie).redirect(302, url);
  };
}

/**
 * Set while the browser signs in again after a used or expired code, so a second such code
 * shows the page instead of another round (a key of the wrong pair gets 404 for every code).
 */
const SIGN_IN_AGAIN_COOKIE = 'gw_login_again';
const SIGN_IN_AGAIN_SECONDS = 300;

/**
 * Spec 3.2, 4.4: the gateway answers a used or expired code 404 NOT_FOUND (also the retry of
 * an exchange whose 200 was lost). The browser is sent to sign in again, once: its gateway
 * session usually makes that a round of redirects. Answers whether it was sent.
 */
function signInAgain(
  req: Request,
  res: Response,
  error: GatewayPlatformError,
  target: { loginPath: string; secure: boolean },
): boolean {
  if (error.code !== 'NOT_FOUND' || error.status !== 404) return false;
  if (readCookie(req.headers.cookie, SIGN_IN_AGAIN_COOKIE) !== undefined) return false;
  res.append(
    'Set-Cookie',
    serializeCookie(SIGN_IN_AGAIN_COOKIE, '1', {
      maxAgeSeconds: SIGN_IN_AGAIN_SECONDS,
      path: '/',
      secure: target.secure,
    }),
  );
  res.redirect(302, `${req.baseUrl}${target.loginPath}`);
  return true;
}

/** Spec 4.4: the callback, the exchange, then the platform's own session (spec 1 step 5). */
function finishSignInRoute(
  platform: GatewayPlatform,
  settings: ResolvedOptions,
  sessions: PlatformSessions,
): RouteHandler {
  return async function finishSignIn(req, res) {
    // The URL carries a one-time code: no caching, no Referer.
    res.set('Cache-Control', 'no-store').set('Referrer-Policy', 'no-referrer');
    let result: ExchangeResult;
    try {
      ({ result } = await platform.handleCallback({
        code: typeof req.query.code === 'string' ? req.query.code : undefined,
        cookieHeader: req.headers.cookie,
      }));
    } catch (error) {
      if (!(error instanceof GatewayPlatformError)) throw error;
      settings.onError(error, req);
      // Unavailable: the code may still be good, so the pending cookie stays and a reload of
      // the callback tries again.
      if (error.code !== 'GATEWAY_UNAVAILABLE') {
        res.append('Set-Cookie', platform.clearPendingCookie());
      }
      const secure = platform.settings.secureCookies;
      if (signInAgain(req, res, error, { loginPath: settings.loginPath, secure })) return;
      const { status, text } = callbackFailure(error);
      sendText(res, status, text);
      return;
    }
    res.append('Set-Cookie', platform.clearPendingCookie());
    if (readCookie(req.headers.cookie, SIGN_IN_AGAIN_COOKIE) !== undefined) {
      const secure = platform.settings.secureCookies;
      res.append('Set-Cookie', deleteCookie(SIGN_IN_AGAIN_COOKIE, { path: '/', secure }));
    }
    // A new session id at every sign-in (no session fixation); the previous one is ended.
    const previous = sessions.keyOf(req);
    if (previous !== undefined) await sessions.end(previous);
    res.append('Set-Cookie', await sessions.begin(result));
    res.redirect(302, result.returnTo);
  };
}

/**
 * Spec 4.6: ends the gateway session, then the platform's, then 303 to the identity
 * end-session URL (or afterLogoutPath).
 */
function signOutRoute(
  platform: GatewayPlatform,
  settings: ResolvedOptions,
  sessions: PlatformSessions,
): RouteHandler {
  return async function signOut(req, res) {
    res.set('Cache-Control', 'no-store');
    const origin = requestOrigin(req, settings.origin);
    // A cross-site form cannot log the user out: browsers send Origin on every POST.
    const sentOrigin = req.get('origin');
    if (origin === undefined || (sentOrigin !== undefined && sentOrigin !== origin)) {
      sendText(res, 403, 'Forbidden.');
      return;
    }
    const current = await sessions.current(req);
    let logoutUrl: string | null = null;
    if (current !== undefined) {
      try {
        ({ logoutUrl } = await platform.logout({
          gatewayToken: current.result.session.gatewayToken,
          origin,
          ...(settings.logoutReturnTo === undefined ? {} : { returnTo: settings.logoutReturnTo }),
        }));
      } catch (error) {
        if (!(error instanceof GatewayPlatformError)) throw error;
        settings.onError(error, req);
        if (error.code === 'GATEWAY_UNAVAILABLE') {
          // The gateway session may still be live: keep the platform's, so logout can be retried.
          sendText(res, 503, 'Sign-out is temporarily unavailable. Please try again.');
          return;
        }
        // Refused (e.g. Origin not allowlisted): sign out here all the same.
      }
    }
    const key = sessions.keyOf(req);
    if (key !== undefined) await sessions.end(key);
    res.append('Set-Cookie', sessions.clearCookie());
    res.redirect(303, logoutUrl ?? settings.afterLogoutPath);
  };
}
