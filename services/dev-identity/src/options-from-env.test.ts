import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { createDevIdentityService } from './dev-identity-service.js';
import { devIdentityOptionsFromEnv } from './options-from-env.js';

const secret = 'a-gateway-client-secret';

describe('devIdentityOptionsFromEnv (main.ts)', () => {
  it('runs the shipped seed accounts in PROD and PARTNER with the gateway client', async () => {
    const { port, options } = await devIdentityOptionsFromEnv({
      DEV_IDENTITY_GATEWAY_CLIENT_SECRET: secret,
      DEV_IDENTITY_GATEWAY_BASE_URL: 'http://localhost:8080/',
    });
    expect(port).toBe(8090);
    expect(options.publicOrigin).toBe('http://localhost:8090');
    // The onboarding page calls the gateway there (the service runs on its own origin).
    expect(options.gatewayBaseUrl).toBe('http://localhost:8080');
    expect(options.audience).toBe('http://localhost:8080');
    expect(options.serviceKey).toBeUndefined();
    expect(options.keyStore).toBeUndefined();
    expect(options.environments.map((environment) => environment.key)).toEqual(['PROD', 'PARTNER']);
    expect(options.environments[0]?.clients).toEqual([
      {
        clientId: 'gateway',
        clientSecret: secret,
        redirectUris: ['http://localhost:8080/v1/auth/callback'],
        postLogoutRedirectUris: ['http://localhost:8080/v1/auth/logged-out'],
        backchannelLogoutUri: 'http://localhost:8080/v1/auth/backchannel-logout/PROD',
        grantTypes: ['authorization_code'],
      },
    ]);
    // Each environment's gateway client names that environment's back-channel logout endpoint.
    expect(options.environments[1]?.clients[0]?.backchannelLogoutUri).toBe(
      'http://localhost:8080/v1/auth/backchannel-logout/PARTNER',
    );
    const service = await createDevIdentityService(options);
    expect(service.accounts('PROD').map((account) => account.email)).toEqual([
      'admin@example.com',
      'alice@example.com',
      'bob@example.com',
    ]);
    expect(service.accounts('PARTNER').map((account) => account.email)).toEqual([
      'alice@example.com',
    ]);
    await service.close();
  });

  it('reads the seed file, the data folder, the service key and a machine client', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'dev-identity-env-'));
    try {
      const seedFile = join(folder, 'seed.json');
      await writeFile(
        seedFile,
        JSON.stringify([
          {
            environmentKey: 'STAGE_EU',
            email: 'x@example.com',
            password: 'x',
            emailVerified: true,
          },
        ]),
      );
      const { port, options } = await devIdentityOptionsFromEnv({
        PORT: '9100',
        DEV_IDENTITY_ACCOUNTS_FILE: seedFile,
        DEV_IDENTITY_DATA_DIR: join(folder, 'data'),
        DEV_IDENTITY_GATEWAY_CLIENT_SECRET: secret,
        DEV_IDENTITY_ADMIN_CLIENT_SECRET: 'an-admin-client-secret',
        IDENTITY_SERVICE_KEY: 'k'.repeat(32),
        DEV_IDENTITY_SIGNING_ALG: 'RS256',
      });
      expect(port).toBe(9100);
      expect(options.publicOrigin).toBe('http://localhost:9100');
      expect(
        options.environments.map((environment) => [environment.key, environment.displayName]),
      ).toEqual([
        ['PROD', 'Deployment'],
        ['STAGE_EU', 'Stage eu'],
      ]);
      expect(options.environments[0]?.clients.map((client) => client.clientId)).toEqual([
        'gateway',
        'gateway-admin',
      ]);
      expect(options.serviceKey).toBe('k'.repeat(32));
      expect(options.signingAlg).toBe('RS256');
      expect(options.keyStore).toBeDefined();
      expect(options.accountStore).toBeDefined();
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('names what is missing', async () => {
    await expect(devIdentityOptionsFromEnv({})).rejects.toThrow(
      /DEV_IDENTITY_GATEWAY_CLIENT_SECRET is required/,
    );
    await expect(
      devIdentityOptionsFromEnv({ DEV_IDENTITY_GATEWAY_CLIENT_SECRET: secret, PORT: 'x' }),
    ).rejects.toThrow(/PORT must be an integer/);
  });
});
