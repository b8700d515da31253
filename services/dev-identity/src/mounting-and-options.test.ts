import { describe, expect, it } from '@jest/globals';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { createDevIdentityService } from './dev-identity-service.js';
import {
  signInAndExchange,
  startDevIdentity,
  testAccounts,
  testAudience,
  testEnvironments,
} from './testing/dev-identity-harness.js';

describe('handle', () => {
  it('passes paths that are not its own to next', async () => {
    const identity = await startDevIdentity();
    try {
      const response = await fetch(`${identity.origin}/v1/auth/start`);
      expect(response.status).toBe(418);
      expect(await response.text()).toBe('next');
    } finally {
      await identity.close();
    }
  });

  it('works mounted at /api/auth the way Express mounts it (req.originalUrl full, req.url relative)', async () => {
    const identity = await startDevIdentity({}, { mount: '/api/auth' });
    try {
      const issuer = identity.issuer('PROD');
      const document = (await (
        await fetch(`${issuer}/.well-known/openid-configuration`)
      ).json()) as Record<string, unknown>;
      expect(document).toMatchObject({ issuer, token_endpoint: `${issuer}/oauth2/token` });
      const { tokens } = await signInAndExchange({
        issuer,
        email: 'alice@example.com',
        password: 'alice-password',
      });
      expect(tokens.id_token).toEqual(expect.any(String));
    } finally {
      await identity.close();
    }
  });
});

describe('signingAlg RS256', () => {
  it('signs ID tokens and access tokens with RS256', async () => {
    const identity = await startDevIdentity({ signingAlg: 'RS256' });
    try {
      const issuer = identity.issuer('PROD');
      const { tokens, nonce } = await signInAndExchange({
        issuer,
        email: 'alice@example.com',
        password: 'alice-password',
        resource: testAudience,
      });
      expect(decodeProtectedHeader(tokens.id_token as string).alg).toBe('RS256');
      expect(decodeProtectedHeader(tokens.access_token as string).alg).toBe('RS256');
      const { payload } = await jwtVerify(
        tokens.id_token as string,
        createRemoteJWKSet(new URL(`${issuer}/jwks`)),
        { issuer, audience: 'gateway' },
      );
      expect(payload.nonce).toBe(nonce);
    } finally {
      await identity.close();
    }
  });
});

describe('createDevIdentityService options', () => {
  const valid = {
    publicOrigin: 'http://localhost:8090',
    environments: testEnvironments,
    accounts: testAccounts,
    audience: testAudience,
  };

  it.each([
    [{ publicOrigin: 'http://localhost:8090/path' }, /publicOrigin must be an origin/],
    [{ serviceKey: 'too-short' }, /serviceKey must be at least 32 characters/],
    [{ environments: [] }, /environments must name at least one/],
    [
      { environments: [{ key: 'prod', displayName: 'x', clients: [] }] },
      /environments\[0\]\.key "prod" must match/,
    ],
    [
      {
        accounts: [
          { environmentKey: 'NOPE', email: 'a@example.com', password: 'pw', emailVerified: true },
        ],
      },
      /accounts\[0\]: environmentKey "NOPE" is not one of the environments \(PROD, PARTNER\)/,
    ],
    [
      {
        accounts: [
          { environmentKey: 'PROD', email: 'a@example.com', password: 'pw', emailVerified: true },
          { environmentKey: 'PROD', email: 'A@example.com', password: 'pw', emailVerified: true },
        ],
      },
      /accounts\[1\]: A@example.com is repeated in PROD/,
    ],
    [
      { accounts: [{ environmentKey: 'PROD', email: 'a@example.com', emailVerified: true }] },
      /accounts\[0\]: needs a password or a passwordHash/,
    ],
  ])('refuses %j', async (override, message) => {
    await expect(createDevIdentityService({ ...valid, ...override })).rejects.toThrow(message);
  });
});
