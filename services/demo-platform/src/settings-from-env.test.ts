import { describe, expect, it } from '@jest/globals';
import {
  DemoPlatformConfigError,
  demoPlatformPortFromEnv,
  demoPlatformSettingsFromEnv,
} from './settings-from-env.js';

const key = {
  DEMO_PLATFORM_BFF_CLIENT_ID: 'pk_demo_web',
  DEMO_PLATFORM_BFF_CLIENT_SECRET: 'secret-value-0123456789',
};

describe('the demo platform settings', () => {
  it('default to port 3000, platform DEMO and the gateway on localhost:8080', () => {
    expect(demoPlatformSettingsFromEnv({ ...key, DEMO_PLATFORM_PORT: '' })).toEqual({
      port: 3000,
      publicOrigin: 'http://localhost:3000',
      gatewayUrl: 'http://localhost:8080',
      platformKey: 'DEMO',
      bffKey: { clientId: 'pk_demo_web', clientSecret: 'secret-value-0123456789' },
    });
  });

  it('take a public origin, a gateway URL and a backend key', () => {
    const settings = demoPlatformSettingsFromEnv({
      ...key,
      DEMO_PLATFORM_PORT: '4000',
      DEMO_PLATFORM_PUBLIC_ORIGIN: 'https://demo.example.com/ignored-path',
      GATEWAY_URL: 'https://auth.example.com/',
      DEMO_PLATFORM_BACKEND_CLIENT_ID: 'pk_demo_backend',
      DEMO_PLATFORM_BACKEND_CLIENT_SECRET: 'backend-secret-0123456789',
    });
    expect(settings).toMatchObject({
      port: 4000,
      publicOrigin: 'https://demo.example.com',
      gatewayUrl: 'https://auth.example.com',
      backendKey: { clientId: 'pk_demo_backend', clientSecret: 'backend-secret-0123456789' },
    });
  });

  it('stop on bad values, naming each variable and never echoing a value', () => {
    const attempt = () =>
      demoPlatformSettingsFromEnv({
        DEMO_PLATFORM_PORT: '70000',
        GATEWAY_URL: 'ftp://gateway',
        DEMO_PLATFORM_KEY: 'demo',
        DEMO_PLATFORM_BFF_CLIENT_SECRET: 'short-secret',
      });
    expect(attempt).toThrow(DemoPlatformConfigError);
    const message = (() => {
      try {
        attempt();
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    for (const name of [
      'DEMO_PLATFORM_PORT',
      'GATEWAY_URL',
      'DEMO_PLATFORM_KEY',
      'DEMO_PLATFORM_BFF_CLIENT_ID',
      'DEMO_PLATFORM_BFF_CLIENT_SECRET',
    ]) {
      expect(message).toContain(name);
    }
    expect(message).not.toContain('short-secret');
    expect(message).not.toContain('70000');
  });

  it('want both parts of a backend key or neither', () => {
    expect(() =>
      demoPlatformSettingsFromEnv({ ...key, DEMO_PLATFORM_BACKEND_CLIENT_ID: 'pk_backend' }),
    ).toThrow('DEMO_PLATFORM_BACKEND_CLIENT_SECRET');
  });

  it('read DEMO_PLATFORM_PORT alone for pnpm start', () => {
    expect(demoPlatformPortFromEnv({})).toBe(3000);
    expect(demoPlatformPortFromEnv({ DEMO_PLATFORM_PORT: '3100' })).toBe(3100);
    expect(() => demoPlatformPortFromEnv({ DEMO_PLATFORM_PORT: 'abc' })).toThrow(
      'DEMO_PLATFORM_PORT',
    );
  });
});
