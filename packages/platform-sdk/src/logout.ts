import { GatewayPlatformError } from './errors.js';
import { readLogoutResult } from './gateway-answers.js';
import { callGateway, gatewaySessionCookie } from './gateway-request.js';
import type { LogoutResult } from './gateway-types.js';
import type { Introspector } from './introspect.js';
import type { PlatformSettings } from './options.js';

export type LogoutRequest = {
  /** The gatewayToken of the exchange, kept server-side by the platform. */
  gatewayToken: string;
  /**
   * The platform's own origin, e.g. `https://shop.example`: sent as `Origin`, which the
   * gateway accepts when it is the origin of one of the platform's return URLs (spec 2.15).
   */
  origin: string;
  /** Where the browser ends up after the identity end-session (spec 4.6, 4.1.1 rules). */
  returnTo?: string;
};

/**
 * Spec 4.6: ends the gateway session on the browser's behalf. The token is dropped from the
 * introspect cache first, whatever the gateway answers. The gateway revokes the session
 * once it accepts the Origin, also when it then refuses `returnTo`.
 */
export async function logout(
  settings: PlatformSettings,
  introspector: Introspector,
  request: LogoutRequest,
): Promise<LogoutResult> {
  introspector.forget(request.gatewayToken);
  if (!isOrigin(request.origin)) {
    throw new GatewayPlatformError(
      'INVALID_ORIGIN',
      `logout: origin must be a scheme://host[:port] origin, got ${JSON.stringify(request.origin)}`,
    );
  }
  const body = await callGateway(settings, {
    path: '/v1/auth/logout',
    operation: 'logout',
    headers: {
      cookie: gatewaySessionCookie(request.gatewayToken),
      origin: request.origin,
    },
    ...(request.returnTo === undefined ? {} : { body: { returnTo: request.returnTo } }),
  });
  return readLogoutResult(body);
}

/** True for `scheme://host[:port]` with an http(s) scheme and nothing else. */
export function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}
