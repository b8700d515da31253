import { describe, expect, it } from '@jest/globals';
import {
  readAccountSessions,
  readEndOtherSessionsResult,
  readExchangeResult,
  readIntrospection,
  readLogoutResult,
} from './gateway-answers.js';

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

describe('readAccountSessions (GET /v1/account/sessions)', () => {
  const here = {
    id: exchangeBody.session.id,
    platform: { key: 'SHOP', name: 'Shop' },
    environment: { key: 'PROD', tier: 'development' },
    createdAt: '2029-12-31T23:00:00.000Z',
    expiresAt: exchangeBody.session.expiresAt,
    current: true,
  };
  const elsewhere = { ...here, id: '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f', platform: null };

  it('answers the items, a session without a platform included, fields added later kept', () => {
    const withExtra = { ...elsewhere, current: false, addedLater: 1 };
    expect(readAccountSessions({ items: [here, withExtra] })).toEqual([here, withExtra]);
    expect(readAccountSessions({ items: [] })).toEqual([]);
  });

  it.each([
    ['no items', {}],
    ['a platform without a name', { items: [{ ...here, platform: { key: 'SHOP' } }] }],
    ['an unknown tier', { items: [{ ...here, environment: { key: 'PROD', tier: 'moon' } }] }],
    ['a bad createdAt', { items: [{ ...here, createdAt: 'yesterday' }] }],
    ['no current flag', { items: [{ ...here, current: undefined }] }],
  ])('refuses %s as INVALID_GATEWAY_RESPONSE', (_name, body) => {
    expect(() => readAccountSessions(body)).toThrow(
      expect.objectContaining({ code: 'INVALID_GATEWAY_RESPONSE' }),
    );
  });
});

describe('readEndOtherSessionsResult (DELETE /v1/account/sessions?except=current)', () => {
  it('accepts a count, nothing else', () => {
    expect(readEndOtherSessionsResult({ revokedSessions: 2 })).toEqual({ revokedSessions: 2 });
    expect(readEndOtherSessionsResult({ revokedSessions: 0 })).toEqual({ revokedSessions: 0 });
    for (const body of [{}, { revokedSessions: -1 }, { revokedSessions: 1.5 }, null]) {
      expect(() => readEndOtherSessionsResult(body)).toThrow('not the documented shape');
    }
  });
});
