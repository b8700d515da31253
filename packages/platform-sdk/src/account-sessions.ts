import { GatewayPlatformError } from './errors.js';
import { readAccountSessions, readEndOtherSessionsResult } from './gateway-answers.js';
import { callGateway, gatewaySessionCookie } from './gateway-request.js';
import type { AccountSession, EndOtherSessionsResult } from './gateway-types.js';
import type { Introspector } from './introspect.js';
import { isOrigin } from './logout.js';
import type { PlatformSettings } from './options.js';

// The signed-in user's own sessions, asked on the user's behalf with the gateway token as
// spec 4.4 has platforms forward it: `Cookie: svc_auth_session=<token>`, and on the write an
// allowlisted `Origin` (spec 5: cookie writes need one, else 403 FORBIDDEN).

export type EndOtherSessionsRequest = {
  /** The gatewayToken of the exchange, kept server-side by the platform. */
  gatewayToken: string;
  /** The platform's own origin, e.g. `https://shop.example`, sent as `Origin`. */
  origin: string;
};

/** `GET /v1/account/sessions`: the user's live sessions, newest first. */
export async function listSessions(
  settings: PlatformSettings,
  gatewayToken: string,
): Promise<AccountSession[]> {
  const body = await callGateway(settings, {
    method: 'GET',
    path: '/v1/account/sessions',
    operation: 'session list',
    headers: { cookie: gatewaySessionCookie(gatewayToken) },
  });
  return readAccountSessions(body);
}

/**
 * `DELETE /v1/account/sessions?except=current`: ends the user's other sessions, on every
 * platform. Then, whatever the gateway answered, the user's cached introspections are
 * dropped, so that this platform's other sessions of the user end at their next request.
 */
export async function endOtherSessions(
  settings: PlatformSettings,
  introspector: Introspector,
  request: EndOtherSessionsRequest,
): Promise<EndOtherSessionsResult> {
  if (!isOrigin(request.origin)) {
    throw new GatewayPlatformError(
      'INVALID_ORIGIN',
      `endOtherSessions: origin must be a scheme://host[:port] origin, got ${JSON.stringify(request.origin)}`,
    );
  }
  try {
    const body = await callGateway(settings, {
      method: 'DELETE',
      path: '/v1/account/sessions?except=current',
      operation: 'sign-out of the other sessions',
      headers: { cookie: gatewaySessionCookie(request.gatewayToken), origin: request.origin },
    });
    return readEndOtherSessionsResult(body);
  } finally {
    introspector.forgetUserOf(request.gatewayToken);
  }
}
