import { GatewayError } from '@gateway/errors';
import { fetchJson } from './fetch-json.js';

/** The parts of an OpenID Provider's discovery document the gateway reads. */
export type DiscoveryDocument = {
  issuer: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  end_session_endpoint?: string;
  jwks_uri?: string;
  [member: string]: unknown;
};

const endpointMembers = [
  'authorization_endpoint',
  'token_endpoint',
  'end_session_endpoint',
  'jwks_uri',
] as const;

/** `<issuer>/.well-known/openid-configuration` (OpenID Connect Discovery 1.0, section 4). */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

/**
 * Fetches and checks an issuer's discovery document. Unreachable, slow, non-200 or non-JSON:
 * IDENTITY_UNAVAILABLE. A document that is not one, or that names any other issuer than
 * `issuer` (compared exactly): IDENTITY_DISCOVERY_INVALID.
 */
export async function fetchDiscoveryDocument(
  issuer: string,
  options: { timeoutMs: number },
): Promise<DiscoveryDocument> {
  const result = await fetchJson(discoveryUrl(issuer), options.timeoutMs);
  if (!result.ok) {
    throw new GatewayError(
      'IDENTITY_UNAVAILABLE',
      `The identity provider's discovery document ${result.reason}.`,
      { details: { issuer }, cause: result.cause },
    );
  }
  return parseDiscoveryDocument(result.body, issuer);
}

/** Checks a parsed discovery document against the issuer it was fetched for. */
export function parseDiscoveryDocument(body: unknown, issuer: string): DiscoveryDocument {
  const invalid = (message: string, details: Record<string, string> = {}) =>
    new GatewayError('IDENTITY_DISCOVERY_INVALID', message, { details: { issuer, ...details } });
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid("The identity provider's discovery document is not a JSON object.");
  }
  const document: Record<string, unknown> = { ...body };
  if (typeof document.issuer !== 'string') {
    throw invalid("The identity provider's discovery document has no issuer.");
  }
  if (document.issuer !== issuer) {
    throw invalid("The identity provider's discovery document names another issuer.", {
      reportedIssuer: document.issuer.slice(0, 300),
    });
  }
  for (const member of endpointMembers) {
    const value = document[member];
    if (value === undefined || value === null) {
      delete document[member];
    } else if (typeof value !== 'string' || !isHttpUrl(value)) {
      throw invalid(`The identity provider's discovery document has an invalid ${member}.`);
    }
  }
  return document as DiscoveryDocument;
}

function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'https:' || protocol === 'http:';
}
