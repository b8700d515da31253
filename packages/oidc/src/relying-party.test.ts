import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/errors';
import { startTestTokenIssuer, type TestTokenIssuer } from '@gateway/testkit';
import { createDiscoveryCache } from './discovery-cache.js';
import { createJwksCache } from './jwks-cache.js';
import * as openid from 'openid-client';
import {
  createRelyingParty,
  pkceChallengeOf,
  type RelyingParty,
  type RelyingPartyClient,
} from './relying-party.js';

// What openid-client (and jose after it) refuses in an authorization response, a token
// response and an ID token, each answered with the spec's code (spec 4.2 steps 2-3, 7;
// oidc-error-codes.ts). The provider is the test's own, so that it can misbehave: it serves
// discovery and a token endpoint whose answer each test scripts; its ID tokens are signed
// with keys the test holds.

type Answer = { status: number; body: unknown; headers?: Record<string, string> };

let signer: TestTokenIssuer;
let server: Server;
let issuer: string;
let answerTokenRequest: () => Promise<Answer> = async () => ({ status: 500, body: {} });
const tokenRequests: { authorization: string | undefined; form: URLSearchParams }[] = [];
let relyingParty: RelyingParty;
let client: RelyingPartyClient;

const CLIENT_ID = 'gateway';
const NONCE = 'the-nonce-of-this-login';
const STATE = 'the-state-of-this-login';
const REDIRECT_URI = 'http://localhost:8080/v1/auth/callback';

beforeAll(async () => {
  signer = await startTestTokenIssuer({ alg: 'ES256', path: '/signer' });
  server = createServer((req, res) => {
    const send = ({ status, body, headers }: Answer) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/idp/.well-known/openid-configuration') {
      send({
        status: 200,
        body: {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          end_session_endpoint: `${issuer}/logout`,
          jwks_uri: signer.jwksUri,
          authorization_response_iss_parameter_supported: true,
        },
      });
    } else if (req.method === 'POST' && req.url === '/idp/token') {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        tokenRequests.push({
          authorization: req.headers.authorization,
          form: new URLSearchParams(Buffer.concat(chunks).toString('utf8')),
        });
        void answerTokenRequest().then(send);
      });
    } else {
      send({ status: 404, body: { error: 'not_found' } });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/idp`;
  client = { issuer, clientId: CLIENT_ID, clientSecret: 'the secret' };
  relyingParty = createRelyingParty({
    discovery: createDiscoveryCache({ timeoutMs: 2_000 }),
    jwks: createJwksCache({ timeoutMs: 2_000 }),
    timeoutMs: 2_000,
  });
});

afterAll(async () => {
  server.closeAllConnections();
  await Promise.all([new Promise((resolve) => server.close(resolve)), signer.close()]);
});

const now = () => Math.floor(Date.now() / 1000);

const idToken = (claims: Record<string, unknown> = {}) =>
  signer.sign({ iss: issuer, aud: CLIENT_ID, sub: 'user-1', nonce: NONCE, ...claims });

const tokenResponse = (id_token: string, changes: Record<string, unknown> = {}): Answer => ({
  status: 200,
  body: { access_token: 'ignored', token_type: 'Bearer', id_token, ...changes },
});

function complete(changes: { iss?: string | undefined; state?: string } = {}) {
  return relyingParty.completeAuthorization(client, {
    redirectUri: REDIRECT_URI,
    code: 'the-code',
    state: changes.state ?? STATE,
    iss: 'iss' in changes ? changes.iss : issuer,
    codeVerifier: 'a-pkce-verifier-of-at-least-forty-three-characters-0123',
    expectedNonce: NONCE,
  });
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return (error as GatewayError).code;
}

describe('the relying party, behaving', () => {
  it('builds the spec 4.1 step 7 authorize URL', async () => {
    const url = new URL(
      await relyingParty.authorizationUrl(client, {
        redirectUri: REDIRECT_URI,
        state: STATE,
        nonce: NONCE,
        codeVerifier: 'a-pkce-verifier-of-at-least-forty-three-characters-0123',
        signUp: true,
      }),
    );
    expect(`${url.origin}${url.pathname}`).toBe(`${issuer}/authorize`);
    expect([...url.searchParams.keys()]).toEqual([
      'client_id',
      'redirect_uri',
      'response_type',
      'scope',
      'state',
      'nonce',
      'code_challenge',
      'code_challenge_method',
      'screen_hint',
    ]);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'openid profile email',
      code_challenge_method: 'S256',
      screen_hint: 'signup',
    });
  });

  it('exchanges the code with client_secret_basic and answers the verified claims', async () => {
    answerTokenRequest = async () => tokenResponse(await idToken());
    const { claims } = await complete();
    expect(claims).toMatchObject({ sub: 'user-1', nonce: NONCE });
    const request = tokenRequests.at(-1);
    expect(request?.authorization).toMatch(/^Basic /);
    expect(Object.fromEntries(request?.form ?? [])).toMatchObject({
      grant_type: 'authorization_code',
      code: 'the-code',
      redirect_uri: REDIRECT_URI,
    });
  });

  it('builds the spec 4.6 end-session URL', async () => {
    const url = new URL(
      (await relyingParty.endSessionUrl(client, () => ({ id_token_hint: 'x', state: 's' }))) ?? '',
    );
    expect(`${url.origin}${url.pathname}`).toBe(`${issuer}/logout`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: CLIENT_ID,
      id_token_hint: 'x',
      state: 's',
    });
  });
});

describe('what openid-client refuses in the authorization response (RFC 9207)', () => {
  it('a response iss naming another issuer: 401 ID_TOKEN_INVALID, and the code goes nowhere', async () => {
    const before = tokenRequests.length;
    expect(await codeOf(complete({ iss: 'https://another.example' }))).toBe('ID_TOKEN_INVALID');
    expect(tokenRequests.length).toBe(before);
  });

  it('no iss from a provider that advertises it: 401 ID_TOKEN_INVALID', async () => {
    expect(await codeOf(complete({ iss: undefined }))).toBe('ID_TOKEN_INVALID');
  });
});

describe('what openid-client refuses in the token response', () => {
  it.each<[string, string, () => Promise<Answer>]>([
    [
      'a 401 with a WWW-Authenticate challenge',
      'AUTHORIZATION_CODE_EXCHANGE_FAILED',
      async () => ({
        status: 401,
        body: { error: 'invalid_client' },
        headers: { 'www-authenticate': 'Basic realm="idp", error="invalid_client"' },
      }),
    ],
    [
      'no access_token',
      'TOKEN_RESPONSE_INVALID',
      async () => ({ status: 200, body: { token_type: 'Bearer', id_token: await idToken() } }),
    ],
    [
      'a token_type it does not know',
      'TOKEN_RESPONSE_INVALID',
      async () => tokenResponse(await idToken(), { token_type: 'mac' }),
    ],
    [
      'a body that is not JSON',
      'IDENTITY_UNAVAILABLE',
      async () => ({ status: 200, body: 'not json', headers: { 'content-type': 'text/plain' } }),
    ],
  ])('%s: %s', async (_name, code, answer) => {
    answerTokenRequest = answer;
    expect(await codeOf(complete())).toBe(code);
  });
});

describe('what openid-client and jose refuse in the ID token', () => {
  it.each<[string, string, Record<string, unknown>]>([
    ['a second audience and no azp', 'ID_TOKEN_INVALID', { aud: [CLIENT_ID, 'another-client'] }],
    ['an azp naming another client', 'ID_TOKEN_INVALID', { azp: 'another-client' }],
    ['an iat a day in the future', 'ID_TOKEN_INVALID', { iat: now() + 86_400 }],
    ['an nbf in the future', 'ID_TOKEN_INVALID', { nbf: now() + 600 }],
    ['an auth_time that is not a number', 'ID_TOKEN_INVALID', { auth_time: 'yesterday' }],
    ['no iat', 'ID_TOKEN_INVALID', { iat: undefined }],
    ['the nonce of another login', 'NONCE_MISMATCH', { nonce: 'another-nonce' }],
    ['no nonce', 'NONCE_MISMATCH', { nonce: undefined }],
  ])('%s: %s', async (_name, code, claims) => {
    answerTokenRequest = async () => tokenResponse(await idToken(claims));
    expect(await codeOf(complete())).toBe(code);
  });

  it('a token that is not a JWT: 401 ID_TOKEN_INVALID', async () => {
    answerTokenRequest = async () => tokenResponse('not-a-jwt');
    expect(await codeOf(complete())).toBe('ID_TOKEN_INVALID');
  });
});

describe('the PKCE challenge (S256)', () => {
  it("is RFC 7636's, as openid-client computes it", async () => {
    // RFC 7636 Appendix B.
    expect(pkceChallengeOf('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
    const verifier = openid.randomPKCECodeVerifier();
    expect(pkceChallengeOf(verifier)).toBe(await openid.calculatePKCECodeChallenge(verifier));
  });
});
