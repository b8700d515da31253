import { SignJWT } from 'jose';
import { GatewayError } from '@gateway/errors';

/** What the gateway asks of the identity service (the `act` claim, spec 4.15). */
export type IdentityServiceAction = 'users.suspend' | 'users.sessions.revoke';

/** `done`: the identity service acted (also when repeated); `user_not_found`: no such user. */
export type IdentityServiceResult = 'done' | 'user_not_found';

export type IdentityServiceClient = {
  /** Suspends the account and revokes its identity sessions, grants and tokens. */
  suspendUser(environmentKey: string, subject: string): Promise<IdentityServiceResult>;
  /** Revokes the account's identity sessions, grants and tokens; it stays active. */
  revokeUserSessions(environmentKey: string, subject: string): Promise<IdentityServiceResult>;
};

export type IdentityServiceClientOptions = {
  /** IDENTITY_SERVICE_URL. */
  baseUrl: string;
  /** IDENTITY_SERVICE_KEY: the HS256 key (its UTF-8 bytes). */
  key: string;
  /** Spec 4.15: 5 s. */
  timeoutMs: number;
  now?: () => Date;
  fetch?: typeof fetch;
};

export const SERVICE_TOKEN_ISSUER = 'svc-gateway';
export const SERVICE_TOKEN_AUDIENCE = 'svc-identity';
/** Spec 4.15: the token lives 60 seconds. */
export const SERVICE_TOKEN_LIFETIME_SECONDS = 60;
/** Spec 4.15: call time-out. */
export const IDENTITY_SERVICE_TIMEOUT_MS = 5000;

const paths: Record<IdentityServiceAction, string> = {
  'users.suspend': 'suspend',
  'users.sessions.revoke': 'sessions/revoke',
};

/**
 * The outbound identity service API (spec 4.15): `POST {baseUrl}/internal/v1/environments/
 * {key}/users/{sub}/(suspend|sessions/revoke)` with a fresh HS256 service token per call.
 * 2xx is `done`, 404 `user_not_found`; anything else (refused, time-out, 5xx, a refused
 * token) is 503 IDENTITY_UNAVAILABLE.
 */
export function createIdentityServiceClient(
  options: IdentityServiceClientOptions,
): IdentityServiceClient {
  const key = new TextEncoder().encode(options.key);
  const now = options.now ?? (() => new Date());
  const doFetch = options.fetch ?? fetch;
  const base = options.baseUrl.replace(/\/+$/, '');

  async function serviceToken(environmentKey: string, action: IdentityServiceAction) {
    const issuedAt = Math.floor(now().getTime() / 1000);
    return new SignJWT({ env: environmentKey, act: action })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(SERVICE_TOKEN_ISSUER)
      .setAudience(SERVICE_TOKEN_AUDIENCE)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + SERVICE_TOKEN_LIFETIME_SECONDS)
      .sign(key);
  }

  async function call(
    action: IdentityServiceAction,
    environmentKey: string,
    subject: string,
  ): Promise<IdentityServiceResult> {
    const url =
      `${base}/internal/v1/environments/${encodeURIComponent(environmentKey)}` +
      `/users/${encodeURIComponent(subject)}/${paths[action]}`;
    const token = await serviceToken(environmentKey, action);
    let status: number;
    let code: unknown;
    try {
      const response = await doFetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        signal: AbortSignal.timeout(options.timeoutMs),
        redirect: 'manual',
      });
      status = response.status;
      if (status === 404) code = errorCodeOf(await response.text());
      else await response.body?.cancel();
    } catch (cause) {
      throw new GatewayError('IDENTITY_UNAVAILABLE', 'The identity service is unreachable.', {
        cause,
      });
    }
    if (status >= 200 && status < 300) return 'done';
    // A 404 naming another code (a wrong IDENTITY_SERVICE_URL path) is not "no such user".
    if (status === 404 && (code === undefined || code === 'IDENTITY_USER_NOT_FOUND')) {
      return 'user_not_found';
    }
    throw new GatewayError('IDENTITY_UNAVAILABLE', 'The identity service API failed.', {
      details: { identityServiceStatus: status },
    });
  }

  return {
    suspendUser: (environmentKey, subject) => call('users.suspend', environmentKey, subject),
    revokeUserSessions: (environmentKey, subject) =>
      call('users.sessions.revoke', environmentKey, subject),
  };
}

function errorCodeOf(text: string): unknown {
  try {
    const body: unknown = JSON.parse(text);
    return typeof body === 'object' && body !== null && 'code' in body ? body.code : undefined;
  } catch {
    return undefined;
  }
}
