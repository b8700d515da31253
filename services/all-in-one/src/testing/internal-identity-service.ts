import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDevIdentityService, type DevIdentityService } from '@gateway/dev-identity';

export const IDENTITY_SERVICE_KEY = 'an-identity-service-key-of-at-least-32-chars';

export type InternalIdentityService = {
  /** The development identity service, whose internal users API the gateway calls (4.15). */
  identity: DevIdentityService;
  /** IDENTITY_SERVICE_URL and IDENTITY_SERVICE_KEY for a gateway under test. */
  env: { IDENTITY_SERVICE_URL: string; IDENTITY_SERVICE_KEY: string };
  close(): Promise<void>;
};

/**
 * A development identity service on its own 127.0.0.1 port with one PROD account,
 * `user-1` <user-1@example.test>, and a service key: the identity side of account
 * suspension and session revocation in tests.
 */
export async function startInternalIdentityService(): Promise<InternalIdentityService> {
  // The service needs its origin, so the server listens first and serves it once it exists.
  const ready: { identity?: DevIdentityService } = {};
  const server = createServer((req, res) => {
    if (ready.identity === undefined) res.writeHead(503).end();
    else void ready.identity.handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const started = await createDevIdentityService({
    publicOrigin: origin,
    environments: [{ key: 'PROD', displayName: 'Deployment', clients: [] }],
    accounts: [
      {
        environmentKey: 'PROD',
        subject: 'user-1',
        email: 'user-1@example.test',
        password: 'a-password-1',
        emailVerified: true,
      },
    ],
    audience: 'http://localhost:8080',
    serviceKey: IDENTITY_SERVICE_KEY,
  });
  ready.identity = started;
  return {
    identity: started,
    env: { IDENTITY_SERVICE_URL: origin, IDENTITY_SERVICE_KEY },
    close: async () => {
      await started.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
