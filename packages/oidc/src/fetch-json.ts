import { failDependencySpan, startDependencySpan } from '@gateway/telemetry';

/** The outcome of one bounded GET of a JSON document from an identity provider. */
export type JsonFetchResult =
  | { ok: true; body: unknown }
  | {
      ok: false;
      /** Short and safe to show: never the upstream body. */
      reason: string;
      cause?: unknown;
    };

/**
 * GETs a JSON document within `timeoutMs` (connection, headers and body together). Redirects
 * are not followed: identity metadata is served where it is announced. Never throws. Runs in
 * an `oidc.get` span; a failure counts as an `identity` dependency error.
 */
export async function fetchJson(url: string, timeoutMs: number): Promise<JsonFetchResult> {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  const span = startDependencySpan(
    'oidc.get',
    parsed === undefined ? {} : { 'server.address': parsed.hostname, 'url.path': parsed.pathname },
  );
  const result = await fetchJsonOnce(url, timeoutMs);
  if (result.ok) span.end();
  else failDependencySpan(span, result.cause ?? { name: 'InvalidResponse' }, 'identity');
  return result;
}

async function fetchJsonOnce(url: string, timeoutMs: number): Promise<JsonFetchResult> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'GET',
      redirect: 'manual',
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (cause) {
    return { ok: false, reason: failureReason(cause, timeoutMs), cause };
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    return { ok: false, reason: `answered HTTP ${response.status}` };
  }
  let text: string;
  try {
    text = await response.text();
  } catch (cause) {
    return { ok: false, reason: failureReason(cause, timeoutMs), cause };
  }
  try {
    return { ok: true, body: JSON.parse(text) as unknown };
  } catch (cause) {
    return { ok: false, reason: 'did not answer JSON', cause };
  }
}

function failureReason(cause: unknown, timeoutMs: number): string {
  // Not `instanceof`: fetch's DOMException may come from another realm (test sandboxes).
  const name = typeof cause === 'object' && cause !== null && 'name' in cause ? cause.name : '';
  if (name === 'TimeoutError' || name === 'AbortError') {
    return `did not answer within ${timeoutMs} ms`;
  }
  return 'is unreachable';
}
