import { readCookie } from './cookies.js';
import { GatewayPlatformError } from './errors.js';
import { exchangeHandoff } from './exchange-handoff.js';
import { readExchangeResult } from './gateway-answers.js';
import type { ExchangeResult } from './gateway-types.js';
import { isLoginOfThisBrowser, takeLoginNonce } from './login-binding.js';
import type { PlatformSettings } from './options.js';
import { clearPendingCookie } from './start-login.js';

export type CallbackRequest = {
  /** The `code` query parameter of the callback. */
  code: string | undefined;
  /** The request's `Cookie` header. */
  cookieHeader: string | undefined;
};

export type CallbackResult = {
  result: ExchangeResult;
  /** Set-Cookie value deleting the pending cookie. */
  clearCookie: string;
};

/** Spec 2.9, 8: a handoff code starts with `handoff_` and has at most 200 characters. */
export function isHandoffCode(code: unknown): code is string {
  return (
    typeof code === 'string' &&
    code.startsWith('handoff_') &&
    code.length > 'handoff_'.length &&
    code.length <= 200
  );
}

/**
 * Spec 4.4, the platform callback: the login must be pending (the cookie set by startLogin),
 * the code well-formed; then the code is redeemed with the BFF key (again after a 503 or no
 * answer, exchange-handoff.ts), and the answer is accepted only for the login this browser
 * started (the nonce in returnTo, login-binding.ts), the expected environment and this
 * platform. result.returnTo comes back without the nonce. Throws GatewayPlatformError:
 * LOGIN_NOT_PENDING, INVALID_CODE, LOGIN_NOT_THIS_BROWSER, UNEXPECTED_ENVIRONMENT,
 * UNEXPECTED_PLATFORM, GATEWAY_UNAVAILABLE (the code may still be good: keep the pending
 * cookie), or the gateway's code (404 NOT_FOUND: invalid, expired or ended code; 401: bad
 * BFF key).
 */
export async function handleCallback(
  settings: PlatformSettings,
  request: CallbackRequest,
): Promise<CallbackResult> {
  const pending = readCookie(request.cookieHeader, settings.pendingCookie.name);
  if (pending === undefined || pending === '') {
    throw new GatewayPlatformError(
      'LOGIN_NOT_PENDING',
      'The callback arrived without the pending-login cookie: no login was started here',
    );
  }
  if (!isHandoffCode(request.code)) {
    throw new GatewayPlatformError(
      'INVALID_CODE',
      'The callback code is missing, does not start with handoff_ or is longer than 200',
    );
  }
  const answered = readExchangeResult(await exchangeHandoff(settings, request.code));
  // The gateway gives a replayed callback URL the session of the login it belongs to; only
  // the browser holding that login's secret may have it. The session is left alone: it is
  // the other browser's, and that browser's callback still gets it.
  const bound = takeLoginNonce(answered.returnTo);
  if (bound === undefined || !isLoginOfThisBrowser(bound.nonce, pending)) {
    throw new GatewayPlatformError(
      'LOGIN_NOT_THIS_BROWSER',
      'The callback belongs to a login that this browser did not start',
    );
  }
  const result: ExchangeResult = { ...answered, returnTo: bound.returnTo };
  // Spec 4.4: the platform must reject an exchange from another environment than expected.
  if (result.environment.key !== settings.expectedEnvironment) {
    throw new GatewayPlatformError(
      'UNEXPECTED_ENVIRONMENT',
      `The user signed in through environment ${result.environment.key}, expected ${settings.expectedEnvironment}`,
    );
  }
  if (result.platform.key !== settings.platformKey) {
    throw new GatewayPlatformError(
      'UNEXPECTED_PLATFORM',
      `The exchange answered platform ${result.platform.key}, expected ${settings.platformKey}`,
    );
  }
  return { result, clearCookie: clearPendingCookie(settings) };
}
