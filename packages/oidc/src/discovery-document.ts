import { GatewayError } from '@gateway/errors';
import * as openid from 'openid-client';
import { allowsHttp, identityFetch } from './identity-fetch.js';
import { oidcFailure } from './oidc-error-codes.js';

/** An OpenID Provider's discovery document, as openid-client reads and checks it. */
export type DiscoveryDocument = openid.ServerMetadata;

/** The endpoints the gateway calls or sends browsers to; each, when present, an http(s) URL. */
const endpointMembers = [
  'authorization_endpoint',
  'token_endpoint',
  'end_session_endpoint',
  'jwks_uri',
] as const;

/**
 * openid-client's discovery answers a Configuration of some client; the document alone is
 * kept, and each environment's client gets its Configuration from it (relying-party.ts).
 */
const DISCOVERY_ONLY_CLIENT = 'discovery';

/**
 * Fetches and checks an issuer's discovery document with openid-client (`<issuer>/.well-known/
 * openid-configuration`, redirects not followed, bounded by `timeoutMs`). Unreachable, slow,
 * non-200 or non-JSON: IDENTITY_UNAVAILABLE. A document that is not one, names any other
 * issuer than `issuer` (compared exactly, spec 4.11), or advertises an endpoint that is not an
 * http(s) URL: IDENTITY_DISCOVERY_INVALID (spec 7).
 */
export async function fetchDiscoveryDocument(
  issuer: string,
  options: { timeoutMs: number },
): Promise<DiscoveryDocument> {
  let document: DiscoveryDocument;
  try {
    const configuration = await openid.discovery(
      new URL(issuer),
      DISCOVERY_ONLY_CLIENT,
      undefined,
      openid.None(),
      {
        [openid.customFetch]: identityFetch,
        timeout: options.timeoutMs / 1000,
        execute: allowsHttp(issuer) ? [openid.allowInsecureRequests] : [],
      },
    );
    document = configuration.serverMetadata();
  } catch (error) {
    throw oidcFailure('discovery', error, { issuer, timeoutMs: options.timeoutMs });
  }
  return checkDiscoveryDocument(document, issuer);
}

/** What openid-client leaves to the caller: the exact issuer and the endpoints' form. */
function checkDiscoveryDocument(document: DiscoveryDocument, issuer: string): DiscoveryDocument {
  const invalid = (message: string, details: Record<string, string> = {}) =>
    new GatewayError('IDENTITY_DISCOVERY_INVALID', message, { details: { issuer, ...details } });
  // openid-client compares issuers as URLs (`https://id.example` is `https://id.example/`).
  if (document.issuer !== issuer) {
    throw invalid("The identity provider's discovery document names another issuer.", {
      reportedIssuer: document.issuer.slice(0, 300),
    });
  }
  const checked: Record<string, unknown> = { ...document };
  for (const member of endpointMembers) {
    const value = checked[member];
    if (value === undefined || value === null) {
      delete checked[member];
    } else if (typeof value !== 'string' || !isHttpUrl(value)) {
      throw invalid(`The identity provider's discovery document has an invalid ${member}.`);
    }
  }
  return checked as DiscoveryDocument;
}

function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'https:' || protocol === 'http:';
}
