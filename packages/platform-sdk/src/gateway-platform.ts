import {
  endOtherSessions,
  listSessions,
  type EndOtherSessionsRequest,
} from './account-sessions.js';
import { handleCallback, type CallbackRequest, type CallbackResult } from './handle-callback.js';
import type {
  AccountSession,
  EndOtherSessionsResult,
  IntrospectionResult,
  LogoutResult,
} from './gateway-types.js';
import { createIntrospectionCache } from './introspection-cache.js';
import { createIntrospector } from './introspect.js';
import { logout, type LogoutRequest } from './logout.js';
import { resolvePlatformSettings, type GatewayPlatformOptions } from './options.js';
import {
  clearPendingCookie,
  startLogin,
  type StartLogin,
  type StartLoginRequest,
} from './start-login.js';

/**
 * The four jobs spec 1 leaves to every platform, plus introspection with its cache and the
 * user's own sessions.
 */
export type GatewayPlatform = {
  /**
   * Spec 4.1/4.4: the start URL and the Set-Cookie value of the short-lived HttpOnly
   * SameSite=Lax pending cookie (random value) for login-CSRF protection.
   */
  startLogin(request?: StartLoginRequest): StartLogin;
  /**
   * Spec 4.4: requires the pending cookie in `cookieHeader` (else LOGIN_NOT_PENDING) and a
   * well-formed `code` (else INVALID_CODE), exchanges the code with the BFF key, checks the
   * environment (else UNEXPECTED_ENVIRONMENT) and answers the exchange body. Send
   * `clearCookie` on success and `clearPendingCookie()` on failure.
   */
  handleCallback(request: CallbackRequest): Promise<CallbackResult>;
  /**
   * Spec 4.5 with its cache: active answers cached by SHA-256 of the token for
   * introspectCacheSeconds, never past expiresAt; `unavailable` on 5xx or time-out; a 401
   * (bad platform credentials) throws.
   */
  introspect(gatewayToken: string): Promise<IntrospectionResult>;
  /**
   * Spec 4.6: ends the gateway session (Cookie svc_auth_session and Origin) and drops the
   * token from the introspect cache; answers the identity end-session URL or null.
   */
  logout(request: LogoutRequest): Promise<LogoutResult>;
  /**
   * The user's live sessions, newest first, on every platform (`GET /v1/account/sessions`
   * with Cookie svc_auth_session); the one of this token is marked `current`.
   */
  listSessions(gatewayToken: string): Promise<AccountSession[]>;
  /**
   * Ends the user's other sessions, on every platform (`DELETE /v1/account/sessions?except=current`
   * with Cookie svc_auth_session and Origin), and drops the user's answers from the
   * introspect cache; answers how many ended.
   */
  endOtherSessions(request: EndOtherSessionsRequest): Promise<EndOtherSessionsResult>;
  /** The Set-Cookie value that deletes the pending cookie: send it whatever happened. */
  clearPendingCookie(): string;
  /** The validated settings the platform was created with (secrets left out). */
  readonly settings: {
    gatewayUrl: string;
    platformKey: string;
    expectedEnvironment: string;
    /** Whether the pending cookie carries `Secure` (default: gatewayUrl is https); the
     * middleware's session cookie follows it unless told otherwise. */
    secureCookies: boolean;
  };
};

/**
 * A platform backend's client of the gateway. The options are validated here, once: a bad
 * setting throws GatewayPlatformError INVALID_OPTIONS naming it.
 */
export function createGatewayPlatform(options: GatewayPlatformOptions): GatewayPlatform {
  const settings = resolvePlatformSettings(options);
  const introspector = createIntrospector(
    settings,
    createIntrospectionCache({ ttlSeconds: settings.introspectCacheSeconds }),
  );
  return {
    startLogin: (request) => startLogin(settings, request),
    handleCallback: (request) => handleCallback(settings, request),
    introspect: (gatewayToken) => introspector.introspect(gatewayToken),
    logout: (request) => logout(settings, introspector, request),
    listSessions: (gatewayToken) => listSessions(settings, gatewayToken),
    endOtherSessions: (request) => endOtherSessions(settings, introspector, request),
    clearPendingCookie: () => clearPendingCookie(settings),
    settings: Object.freeze({
      gatewayUrl: settings.gatewayUrl,
      platformKey: settings.platformKey,
      expectedEnvironment: settings.expectedEnvironment,
      secureCookies: settings.pendingCookie.secure,
    }),
  };
}
