import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { createTestSigningKey } from './test-signing-key.js';
import { startTestTokenIssuer, type TestTokenIssuer } from './test-token-issuer.js';

describe('startTestTokenIssuer', () => {
  let issuer: TestTokenIssuer;
  beforeAll(async () => {
    issuer = await startTestTokenIssuer({ alg: 'EdDSA', path: '/idp' });
  });
  afterAll(() => issuer.close());

  const jwks = async () => (await (await fetch(issuer.jwksUri)).json()) as { keys: [] };

  it('serves a discovery document naming itself and its JWKS', async () => {
    const response = await fetch(`${issuer.issuer}/.well-known/openid-configuration`);
    expect(await response.json()).toMatchObject({
      issuer: issuer.issuer,
      jwks_uri: issuer.jwksUri,
    });
    expect(await jwks()).toEqual({ keys: [issuer.key.publicJwk] });
    expect(issuer.jwksRequests()).toBe(1);
  });

  it('signs with defaults that can be overridden or left out', async () => {
    const token = await issuer.sign({ sub: 's', exp: undefined }, { kid: null, typ: 'at+jwt' });
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'EdDSA', typ: 'at+jwt' });
    const { payload } = await jwtVerify(token, createLocalJWKSet(await jwks()), {
      issuer: issuer.issuer,
    });
    expect(payload).not.toHaveProperty('exp');
    expect(payload.sub).toBe('s');
  });

  it('publishes other keys (rotation), and can sign with unpublished ones', async () => {
    const next = await createTestSigningKey('ES256');
    const original = issuer.key;
    issuer.publish([next]);
    expect(issuer.key).toBe(next);
    expect(await jwks()).toEqual({ keys: [next.publicJwk] });
    const token = await issuer.sign({}, { key: original });
    expect(decodeProtectedHeader(token).kid).toBe(original.kid);
    issuer.publish([original]);
  });
});
