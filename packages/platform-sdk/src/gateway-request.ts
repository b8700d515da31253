import { GatewayPlatformError } from './errors.js';
import type { PlatformKey, PlatformSettings } from './options.js';

// One way to call the gateway: a request (POST unless told otherwise) with a time-out, no
// redirects followed, the JSON body read within the same time-out. Failures are normalised here, once:
// - no answer (network error, time-out) and 5xx or 429: GATEWAY_UNAVAILABLE;
// - any other non-2xx: the gateway's own error code (spec 7 body `{ code, message }`),
//   or GATEWAY_ERROR when the body has none;
// - 2xx: the parsed body, checked by the caller (gateway-answers.ts).

export type GatewayCall = {
  /** Default POST; the account's session list is a GET, ending sessions a DELETE. */
  method?: 'GET' | 'POST' | 'DELETE';
  /** The path and, when it has one, the query: `/v1/account/sessions?except=current`. */
  path: `/v1/${string}`;
  /** What the call is for, in error messages: `exchange`, `introspect`, `logout`. */
  operation: string;
  credentials?: PlatformKey;
  headers?: Record<string, string>;
  /** Sent as JSON; no body when undefined. */
  body?: Record<string, string>;
};

/**
 * The `Cookie` header that carries a gateway token on the user's behalf (spec 2.7): spec 4.4
 * has platforms forward the token as `svc_auth_session=<gatewayToken>`, URL-encoded.
 */
export function gatewaySessionCookie(gatewayToken: string): string {
  return `svc_auth_session=${encodeURIComponent(gatewayToken)}`;
}

/** RFC 7617 Basic credentials with a platform key (spec 5 platformBasicAuth). */
export function basicAuthorization(key: PlatformKey): string {
  return `Basic ${Buffer.from(`${key.clientId}:${key.clientSecret}`, 'utf8').toString('base64')}`;
}

export async function callGateway(settings: PlatformSettings, call: GatewayCall): Promise<unknown> {
  const headers: Record<string, string> = { accept: 'application/json', ...call.headers };
  if (call.credentials !== undefined) headers.authorization = basicAuthorization(call.credentials);
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  const signal = AbortSignal.timeout(settings.timeoutMs);

  let response: Response;
  let text: string;
  try {
    response = await settings.fetch(`${settings.gatewayUrl}${call.path}`, {
      method: call.method ?? 'POST',
      headers,
      redirect: 'manual',
      signal,
      ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
    });
    text = await response.text();
  } catch (error) {
    const timedOut = signal.aborted;
    throw new GatewayPlatformError(
      'GATEWAY_UNAVAILABLE',
      timedOut
        ? `The gateway did not answer the ${call.operation} within ${settings.timeoutMs} ms`
        : `The gateway could not be reached for the ${call.operation}`,
      { cause: error },
    );
  }

  const body = parseJson(text);
  if (response.status >= 500 || response.status === 429) {
    throw new GatewayPlatformError(
      'GATEWAY_UNAVAILABLE',
      `The gateway answered the ${call.operation} with ${response.status}${describe(body)}`,
      { status: response.status, ...retryAfterOf(response) },
    );
  }
  if (response.status < 200 || response.status > 299) {
    const code = errorCodeOf(body);
    throw new GatewayPlatformError(
      code ?? 'GATEWAY_ERROR',
      `The gateway refused the ${call.operation} with ${response.status}${describe(body)}`,
      { status: response.status },
    );
  }
  if (body === undefined) {
    throw new GatewayPlatformError(
      'INVALID_GATEWAY_RESPONSE',
      `The gateway answered the ${call.operation} with ${response.status} but no JSON body`,
      { status: response.status },
    );
  }
  return body;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** RFC 9110 10.2.3: `Retry-After` as delay-seconds or an HTTP-date, in whole seconds. */
function retryAfterOf(response: Response): { retryAfterSeconds?: number } {
  const value = response.headers.get('retry-after')?.trim();
  if (value === undefined || value === '') return {};
  if (/^\d+$/.test(value)) return { retryAfterSeconds: Number(value) };
  const at = Date.parse(value);
  if (Number.isNaN(at)) return {};
  return { retryAfterSeconds: Math.max(0, Math.ceil((at - Date.now()) / 1000)) };
}

function errorCodeOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const code = (body as { code?: unknown }).code;
  return typeof code === 'string' && code !== '' ? code : undefined;
}

/** ` NOT_FOUND: Unknown handoff code.` for logs; the gateway's messages carry no secrets. */
function describe(body: unknown): string {
  const code = errorCodeOf(body);
  if (code === undefined) return '';
  const message = (body as { message?: unknown }).message;
  return typeof message === 'string' ? ` ${code}: ${message}` : ` ${code}`;
}
