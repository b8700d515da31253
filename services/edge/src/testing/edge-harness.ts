import { loadConfig } from '@gateway/config';
import { createLocalChangeFeed, type ChangeFeed } from '@gateway/db';
import { createServiceInterceptors, type ServiceTarget } from '@gateway/rpc';
import { createLogger, type Logger } from '@gateway/telemetry';
import { createEdgeApp } from '../edge-app.js';
import type { PlatformAuthenticationLimitSettings } from '../auth/platform-authentication-limits.js';
import type { RateLimitStore } from '../http/rate-limit-store.js';
import { listen } from '../listen.js';
import { createEdgeClients } from '../service-clients.js';
import { createFakeAuthFlow, type FakeAuthFlow } from './fake-auth-flow.js';
import { createFakeOnboarding } from './fake-onboarding.js';
import { createFakeRegistry, type FakeRegistry } from './fake-registry.js';

export type TestEdge = {
  url: string;
  registry: FakeRegistry;
  /** Announce a change made to the fake registry's data, as the real edge does for its own. */
  changeFeed: ChangeFeed;
  authFlow: FakeAuthFlow;
  close(): Promise<void>;
};

const NO_BACKOFF: PlatformAuthenticationLimitSettings = {
  failuresBeforeBackoff: 0,
  windowMs: 1,
  maxKeys: 1,
};

/**
 * The real edge app on a free port, its service clients calling the fake registry and
 * auth-flow services in process (with the services' interceptors, as the all-in-one does; and
 * an onboarding stand-in for requirement versions).
 */
export async function startTestEdge(
  env: { IDENTITY_ISSUER: string; CORS_ORIGINS?: string } & Record<string, string>,
  options: {
    rateLimitStore?: RateLimitStore;
    logger?: Logger;
    bodyDeadlineMs?: number;
    /** Off unless a test asks: tests of a 401 answer meet no back-off from earlier ones. */
    platformAuthenticationLimits?: PlatformAuthenticationLimitSettings;
  } = {},
): Promise<TestEdge> {
  const changeFeed = createLocalChangeFeed();
  const registry = createFakeRegistry();
  const authFlow = createFakeAuthFlow();
  const onboarding = createFakeOnboarding();
  const logger = options.logger ?? createLogger({ service: 'test', level: 'silent' });
  const config = loadConfig({ LOG_LEVEL: 'silent', SERVICE_CALL_TIMEOUT_MS: '3000', ...env });
  const target: ServiceTarget = {
    kind: 'in-process',
    implementations: [registry.implementation, authFlow.implementation, onboarding.implementation],
    serverInterceptors: createServiceInterceptors(logger),
  };
  const clients = createEdgeClients(
    { registry: target, authFlow: target, onboarding: target },
    config.serviceCallTimeoutMs,
  );
  const server = await listen(
    createEdgeApp({
      config,
      logger,
      clients,
      changeFeed,
      ...options,
      platformAuthenticationLimits: options.platformAuthenticationLimits ?? NO_BACKOFF,
    }),
    0,
    '127.0.0.1',
  );
  return {
    url: `http://127.0.0.1:${server.port}`,
    registry,
    changeFeed,
    authFlow,
    close: () => server.close(),
  };
}
