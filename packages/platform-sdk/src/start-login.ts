import { deleteCookie, randomCookieValue, serializeCookie } from './cookies.js';
import { GatewayPlatformError } from './errors.js';
import { loginNonceOf, withLoginNonce } from './login-binding.js';
import type { PlatformSettings } from './options.js';

export type OnboardingMode = 'none' | 'platform' | 'central';

export type StartLoginRequest = {
  /**
   * Where the user goes after signing in: an absolute http(s) URL or a root-relative path
   * under one of the platform's registered return URLs (spec 4.1.1). Default `/`, which the
   * gateway resolves against the default redirect pair.
   */
  returnTo?: string;
  /** `up` opens the registration screen (spec 4.1). Default `in`. */
  defaultScreen?: 'in' | 'up';
  /** An assertion only: must equal the platform's registered defaultOnboardingMode. */
  onboardingMode?: OnboardingMode;
};

export type StartLogin = {
  /** The gateway start URL: send the browser there (302). */
  url: string;
  /** Set-Cookie value of the pending cookie: send it with the redirect. */
  setCookie: string;
};

/**
 * Spec 4.1 and 4.4: the start URL, and the short-lived pending cookie (HttpOnly,
 * SameSite=Lax, a random value) on the platform's own domain that handleCallback requires.
 * Without it an attacker could send a victim's browser to the callback with the attacker's
 * own handoff code and sign the victim in as the attacker (login CSRF); the gateway carries
 * no platform state, so this cookie is the platform's protection. Its value is a secret whose
 * hash rides in returnTo, so the callback also refuses a callback URL replayed in another
 * browser (login-binding.ts).
 */
export function startLogin(
  settings: PlatformSettings,
  request: StartLoginRequest = {},
): StartLogin {
  const secret = randomCookieValue();
  const given = request.returnTo ?? '/';
  const returnTo = withLoginNonce(given, loginNonceOf(secret));
  // Spec 4.1, 8: 1 to 2048 characters, the nonce included. The gateway judges the rest (4.1.1).
  if (given.length < 1 || returnTo.length > 2048) {
    throw new GatewayPlatformError(
      'INVALID_RETURN_TO',
      `returnTo must have 1 to ${2048 - (returnTo.length - given.length)} characters (the gateway takes 2048 characters, the login's nonce included)`,
    );
  }
  const query = new URLSearchParams({ platformKey: settings.platformKey, returnTo });
  if (request.defaultScreen !== undefined) query.set('defaultScreen', request.defaultScreen);
  if (request.onboardingMode !== undefined) query.set('onboardingMode', request.onboardingMode);
  const { name, ...attributes } = settings.pendingCookie;
  return {
    url: `${settings.gatewayUrl}/v1/auth/start?${query.toString()}`,
    setCookie: serializeCookie(name, secret, attributes),
  };
}

/** The Set-Cookie value that deletes the pending cookie. */
export function clearPendingCookie(settings: PlatformSettings): string {
  const { name, path, secure } = settings.pendingCookie;
  return deleteCookie(name, { path, secure });
}
