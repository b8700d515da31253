import { describe, expect, it } from '@jest/globals';
import { readExchangeResult, readIntrospection, readLogoutResult } from './gateway-answers.js';

const exchangeBody = {
  session: {
    id: '6f9619ff-8b86-4d01-b42d-00cf4fc964ff',
    expiresAt: '2030-01-01T00:00:00.000Z',
    gatewayToken: 'opaque-token',
  },
  user: {
    id: '0b5f0f2e-4c1e-4e43-9d2a-7f3b7c3e9a11',
    sub: 'user-1',
    issuer: 'http://localhost:9000',
  },
  platform: { key: 'SHOP' },
  environment: { key: 'PROD', tier: 'development' },
  onboarding: {
    status: 'COMPLETE',
    requirementVersion: 0,
    missingFields: [],
    canCompleteCentrally: false,
  },
  profile: { status: 'COMPLETE', missingFields: [] },
  permissions: [],
  returnTo: 'http://localhost:3000/',
};

describe('readExchangeResult (spec 4.4)', () => {
  it('accepts the documented body and keeps fields added later (spec 9)', () => {
    const withExtra = { ...exchangeBody, addedLater: { x: 1 } };
    expect(readExchangeResult(withExtra)).toEqual(withExtra);
  });

  it.each([
    ['no environment key', { ...exchangeBody, environment: { tier: 'development' } }],
    ['an unknown tier', { ...exchangeBody, environment: { key: 'PROD', tier: 'moon' } }],
    [
      'an empty gatewayToken',
      { ...exchangeBody, session: { ...exchangeBody.session, gatewayToken: '' } },
    ],
    [
      'a bad expiresAt',
      { ...exchangeBody, session: { ...exchangeBody.session, expiresAt: 'soon' } },
    ],
    ['a numeric picture', { ...exchangeBody, user: { ...exchangeBody.user, picture: 1 } }],
    ['non-string permissions', { ...exchangeBody, permissions: [1] }],
    ['an array body', [exchangeBody]],
  ])('refuses %s as INVALID_GATEWAY_RESPONSE', (_name, body) => {
    expect(() => readExchangeResult(body)).toThrow(
      expect.objectContaining({ code: 'INVALID_GATEWAY_RESPONSE' }),
    );
  });
});

describe('readIntrospection (spec 4.5)', () => {
  it('answers the session without `active`, or undefined for active: false', () => {
    const session = {
      sessionId: exchangeBody.session.id,
      expiresAt: exchangeBody.session.expiresAt,
      platformKey: 'SHOP',
      user: {
        id: exchangeBody.user.id,
        issuer: 'http://localhost:9000',
        subject: 'user-1',
        email: null,
        emailVerified: false,
        status: 'ACTIVE',
      },
      environment: { key: 'PROD', tier: 'production' },
    };
    expect(readIntrospection({ active: true, ...session })).toEqual(session);
    expect(readIntrospection({ active: false })).toBeUndefined();
    expect(() => readIntrospection({ active: 'yes' })).toThrow('not the documented shape');
    expect(() => readIntrospection({ active: true })).toThrow('not the documented shape');
  });
});

describe('readLogoutResult (spec 4.6)', () => {
  it('accepts a URL or null, nothing else', () => {
    expect(readLogoutResult({ logoutUrl: 'https://id.example/end' })).toEqual({
      logoutUrl: 'https://id.example/end',
    });
    expect(readLogoutResult({ logoutUrl: null })).toEqual({ logoutUrl: null });
    expect(() => readLogoutResult({})).toThrow('not the documented shape');
  });
});
