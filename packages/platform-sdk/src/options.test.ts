import { describe, expect, it } from '@jest/globals';
import { GatewayPlatformError } from './errors.js';
import { resolvePlatformSettings, type GatewayPlatformOptions } from './options.js';

const valid: GatewayPlatformOptions = {
  gatewayUrl: 'http://localhost:8080/',
  platformKey: 'SHOP',
  bffKey: { clientId: 'bff-id', clientSecret: 'bff-secret' },
  expectedEnvironment: 'PROD',
  fetch: () => Promise.reject(new Error('no network in unit tests')),
};

function failure(options: Partial<GatewayPlatformOptions>): GatewayPlatformError {
  try {
    resolvePlatformSettings({ ...valid, ...options } as GatewayPlatformOptions);
  } catch (error) {
    if (error instanceof GatewayPlatformError) return error;
    throw error;
  }
  throw new Error('the options were accepted');
}

describe('createGatewayPlatform options', () => {
  it('fills the defaults', () => {
    const settings = resolvePlatformSettings(valid);
    expect(settings).toMatchObject({
      gatewayUrl: 'http://localhost:8080',
      introspectionKey: valid.bffKey,
      pendingCookie: { name: 'gw_login_pending', secure: false, maxAgeSeconds: 600, path: '/' },
      introspectCacheSeconds: 45,
      timeoutMs: 5000,
    });
  });

  it('takes introspectCacheSeconds 0: no cache', () => {
    expect(resolvePlatformSettings({ ...valid, introspectCacheSeconds: 0 })).toMatchObject({
      introspectCacheSeconds: 0,
    });
  });

  it('introspects with the backend key when given, and makes cookies Secure for https', () => {
    const backendKey = { clientId: 'backend-id', clientSecret: 'backend-secret' };
    const settings = resolvePlatformSettings({
      ...valid,
      gatewayUrl: 'https://auth.example',
      backendKey,
    });
    expect(settings.introspectionKey).toEqual(backendKey);
    expect(settings.pendingCookie.secure).toBe(true);
  });

  it.each([
    [{ gatewayUrl: 'localhost:8080' }, 'gatewayUrl'],
    [{ gatewayUrl: 'ftp://gateway.example' }, 'gatewayUrl'],
    [{ gatewayUrl: 'https://user:pw@gateway.example' }, 'gatewayUrl'],
    [{ platformKey: 'shop' }, 'platformKey'],
    [{ expectedEnvironment: '' }, 'expectedEnvironment'],
    [{ bffKey: { clientId: 'a:b', clientSecret: 's' } }, 'bffKey.clientId'],
    [{ bffKey: { clientId: 'a', clientSecret: '' } }, 'bffKey.clientSecret'],
    [{ backendKey: { clientId: '', clientSecret: 's' } }, 'backendKey.clientId'],
    [{ introspectCacheSeconds: 29 }, 'introspectCacheSeconds'],
    [{ introspectCacheSeconds: -1 }, 'introspectCacheSeconds'],
    [{ introspectCacheSeconds: 61 }, 'introspectCacheSeconds'],
    [{ introspectCacheSeconds: 45.5 }, 'introspectCacheSeconds'],
    [{ timeoutMs: 0 }, 'timeoutMs'],
    [{ pendingCookie: { name: 'bad name' } }, 'pendingCookie.name'],
    [{ pendingCookie: { path: 'auth' } }, 'pendingCookie.path'],
    [{ pendingCookie: { maxAgeSeconds: 5 } }, 'pendingCookie.maxAgeSeconds'],
  ] as [Partial<GatewayPlatformOptions>, string][])('refuses %j, naming %s', (options, setting) => {
    const error = failure(options);
    expect(error.code).toBe('INVALID_OPTIONS');
    expect(error.message).toContain(`createGatewayPlatform: ${setting} `);
  });
});
