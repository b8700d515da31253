import { isGatewayError } from '@gateway/errors';
import { createRemoteJWKSet, customFetch, errors as joseErrors } from 'jose';
import { fetchDiscoveryDocument, type DiscoveryDocument } from './discovery-document.js';
import { identityFetch } from './identity-fetch.js';
import { unavailableReason } from './oidc-error-codes.js';

export type EnvironmentCheckName = 'discovery' | 'endpoints' | 'jwks' | 'client' | 'secret';

export type EnvironmentCheck = {
  name: EnvironmentCheckName;
  status: 'pass' | 'fail' | 'skip';
  message: string;
};

export type IdentityEnvironmentCheckInput = {
  issuer: string;
  oidcClientId: string | null;
  clientSecretConfigured: boolean;
  /**
   * Whether the stored client secret decrypts; null when that does not apply (the deployment
   * environment, or no stored secret).
   */
  secretDecrypts: boolean | null;
  /** Bound on each network call. */
  timeoutMs: number;
};

const requiredEndpoints = ['authorization_endpoint', 'token_endpoint', 'end_session_endpoint'];

/**
 * The read-only checks of `POST /v1/identity-environments/{key}/validate` (spec 4.11), in
 * the spec's order: discovery, endpoints, jwks, client, secret. A provider failure is
 * reported as a failed check, never thrown. `ok` is true when no check failed.
 *
 * When discovery fails, `endpoints` and `jwks` fail too (their pass condition cannot be
 * shown without a trusted document) with a message pointing at discovery; `skip` is kept
 * for "does not apply" (the secret check of an environment without a stored secret).
 */
export async function runIdentityEnvironmentChecks(
  input: IdentityEnvironmentCheckInput,
): Promise<{ ok: boolean; checks: EnvironmentCheck[] }> {
  const discovery = await checkDiscovery(input.issuer, input.timeoutMs);
  const checks: EnvironmentCheck[] = [
    discovery.check,
    checkEndpoints(discovery.document),
    await checkJwks(discovery.document, input.timeoutMs),
    checkClient(input),
    checkSecret(input.secretDecrypts),
  ];
  return { ok: checks.every((check) => check.status !== 'fail'), checks };
}

async function checkDiscovery(
  issuer: string,
  timeoutMs: number,
): Promise<{ check: EnvironmentCheck; document: DiscoveryDocument | undefined }> {
  try {
    const document = await fetchDiscoveryDocument(issuer, { timeoutMs });
    return {
      check: {
        name: 'discovery',
        status: 'pass',
        message: 'The discovery document is reachable and names this issuer.',
      },
      document,
    };
  } catch (error) {
    let message = 'The discovery document could not be read.';
    if (isGatewayError(error)) {
      message = error.message;
      const reported = error.details?.reportedIssuer;
      if (typeof reported === 'string') {
        message = `The discovery document names the issuer ${JSON.stringify(reported)}, not ${JSON.stringify(issuer)}.`;
      }
    }
    return { check: { name: 'discovery', status: 'fail', message }, document: undefined };
  }
}

function checkEndpoints(document: DiscoveryDocument | undefined): EnvironmentCheck {
  if (document === undefined) {
    return {
      name: 'endpoints',
      status: 'fail',
      message: 'Not checked: the discovery check failed.',
    };
  }
  const missing = requiredEndpoints.filter((member) => document[member] === undefined);
  if (missing.length > 0) {
    return {
      name: 'endpoints',
      status: 'fail',
      message: `The discovery document does not advertise ${missing.join(', ')}.`,
    };
  }
  return {
    name: 'endpoints',
    status: 'pass',
    message: `${requiredEndpoints.join(', ')} are advertised.`,
  };
}

async function checkJwks(
  document: DiscoveryDocument | undefined,
  timeoutMs: number,
): Promise<EnvironmentCheck> {
  const fail = (message: string): EnvironmentCheck => ({ name: 'jwks', status: 'fail', message });
  if (document === undefined) return fail('Not checked: the discovery check failed.');
  if (document.jwks_uri === undefined) return fail('The discovery document has no jwks_uri.');
  const keys = await fetchKeySet(document.jwks_uri, timeoutMs);
  if (!keys.ok) return fail(`jwks_uri ${keys.reason}.`);
  const usable = keys.keys.filter((key) => isObject(key) && typeof key.kty === 'string');
  if (usable.length === 0) return fail('jwks_uri publishes no keys.');
  return {
    name: 'jwks',
    status: 'pass',
    message: `jwks_uri publishes ${usable.length} ${usable.length === 1 ? 'key' : 'keys'}.`,
  };
}

function checkClient(input: IdentityEnvironmentCheckInput): EnvironmentCheck {
  const missing = [
    ...(input.oidcClientId === null || input.oidcClientId === '' ? ['client ID'] : []),
    ...(input.clientSecretConfigured ? [] : ['client secret']),
  ];
  if (missing.length > 0) {
    return {
      name: 'client',
      status: 'fail',
      message: `No ${missing.join(' and no ')} is configured.`,
    };
  }
  return { name: 'client', status: 'pass', message: 'Client ID and secret are configured.' };
}

function checkSecret(secretDecrypts: boolean | null): EnvironmentCheck {
  if (secretDecrypts === null) {
    return {
      name: 'secret',
      status: 'skip',
      message:
        'Does not apply: no client secret is stored for this environment (the deployment environment reads its secret from configuration).',
    };
  }
  if (!secretDecrypts) {
    return {
      name: 'secret',
      status: 'fail',
      message:
        'The stored client secret cannot be decrypted with the current IDENTITY_ENVIRONMENT_SECRET_KEY; re-enter it with PATCH (oidcClientSecret).',
    };
  }
  return { name: 'secret', status: 'pass', message: 'The stored client secret decrypts.' };
}

/**
 * The key set at `jwksUri`, fetched fresh by jose (which refuses anything that is not a JSON
 * Web Key Set), or why not: short and safe to show, never the upstream body.
 */
async function fetchKeySet(
  jwksUri: string,
  timeoutMs: number,
): Promise<{ ok: true; keys: unknown[] } | { ok: false; reason: string }> {
  if (!URL.canParse(jwksUri)) return { ok: false, reason: 'is not a URL' };
  let status: number | undefined;
  const keySet = createRemoteJWKSet(new URL(jwksUri), {
    timeoutDuration: timeoutMs,
    [customFetch]: async (url: string, init: RequestInit) => {
      const response = await identityFetch(url, init);
      status = response.status;
      return response;
    },
  });
  try {
    await keySet.reload();
  } catch (error) {
    if (error instanceof joseErrors.JWKSInvalid) {
      return { ok: false, reason: 'does not answer a JSON Web Key Set' };
    }
    if (status !== undefined && status !== 200)
      return { ok: false, reason: `answered HTTP ${status}` };
    if (error instanceof joseErrors.JOSEError && /as JSON/.test(error.message)) {
      return { ok: false, reason: 'did not answer JSON' };
    }
    return { ok: false, reason: unavailableReason(error, timeoutMs) };
  }
  return { ok: true, keys: keySet.jwks()?.keys ?? [] };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
