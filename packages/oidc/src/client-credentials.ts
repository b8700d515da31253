import * as openid from 'openid-client';
import { allowsHttp } from './identity-fetch.js';

/**
 * An access token of the client credentials grant (RFC 6749 4.4), requested by openid-client
 * with client_secret_basic at `tokenEndpoint` of `issuer`. A refusal or a failure throws
 * openid-client's error. `fetch` replaces the global fetch (a process that calls itself).
 */
export async function clientCredentialsToken(request: {
  issuer: string;
  tokenEndpoint: string;
  clientId: string;
  clientSecret: string;
  parameters: Record<string, string>;
  fetch?: typeof fetch;
}): Promise<string> {
  const configuration = new openid.Configuration(
    { issuer: request.issuer, token_endpoint: request.tokenEndpoint },
    request.clientId,
    undefined,
    openid.ClientSecretBasic(request.clientSecret),
  );
  if (request.fetch !== undefined) {
    const doFetch = request.fetch;
    configuration[openid.customFetch] = (url, init) => doFetch(url, init as RequestInit);
  }
  if (allowsHttp(request.issuer)) openid.allowInsecureRequests(configuration);
  const tokens = await openid.clientCredentialsGrant(configuration, request.parameters);
  return tokens.access_token;
}
