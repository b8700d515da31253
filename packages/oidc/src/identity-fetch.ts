import diagnosticsChannel from 'node:diagnostics_channel';
import { isLoopbackHost } from '@gateway/config';
import { failDependencySpan, startDependencySpan } from '@gateway/telemetry';
import { nodeHttpFetch } from './node-http-fetch.js';

/**
 * Every form POST to an identity provider (the token request) and its outcome,
 * `{ url, form, result: { answered, status?, body? } }`, for in-process observers (tests that
 * check no secret of the exchange leaks into logs and spans). Nothing is built unless someone
 * subscribes.
 */
export const formPostChannel = diagnosticsChannel.channel('gateway:oidc.form-post');

/**
 * The fetch openid-client and jose call for the gateway (their `customFetch`): each request in
 * a dependency span (`oidc.token` for the token request, `oidc.get` for discovery; endpoint
 * host and path only). An unreachable provider or one that answers 5xx counts as an
 * `identity` dependency error. The libraries bound each call with their own signal. The
 * request goes over node:http with keep-alive (node-http-fetch.ts).
 */
export async function identityFetch(url: string, init: RequestInit): Promise<Response> {
  const target = new URL(url);
  const post = init.method === 'POST';
  const span = startDependencySpan(post ? 'oidc.token' : 'oidc.get', {
    'server.address': target.hostname,
    'url.path': target.pathname,
  });
  let response: Response;
  try {
    response = await nodeHttpFetch(url, init);
  } catch (error) {
    failDependencySpan(span, error, 'identity');
    if (post && formPostChannel.hasSubscribers) publish(url, init, { answered: false });
    throw error;
  }
  if (response.status >= 500) {
    failDependencySpan(span, { code: `HTTP_${response.status}` }, 'identity');
  } else {
    span.end();
  }
  if (post && formPostChannel.hasSubscribers) {
    const body: unknown = await response
      .clone()
      .json()
      .catch(() => undefined);
    publish(url, init, { answered: true, status: response.status, body });
  }
  return response;
}

function publish(url: string, init: RequestInit, result: Record<string, unknown>): void {
  const form = Object.fromEntries(new URLSearchParams(init.body as URLSearchParams));
  formPostChannel.publish({ url, form, result });
}

/**
 * Spec 2.4: an issuer is HTTPS, or HTTP on localhost, 127.0.0.1, [::1] or *.localhost. Only
 * the latter get openid-client's `allowInsecureRequests`.
 */
export function allowsHttp(issuer: string): boolean {
  if (!URL.canParse(issuer)) return false;
  const url = new URL(issuer);
  return url.protocol === 'http:' && isLoopbackHost(url.hostname);
}
