// Split mode: the public edge as its own process. It keeps no state and reaches the three
// internal services over HTTP/2 Connect at REGISTRY_SERVICE_URL, AUTH_FLOW_SERVICE_URL and
// ONBOARDING_SERVICE_URL.
import { loadConfigOrExit, type GatewayConfig } from '@gateway/config';
import { closeOnShutdownSignals } from '@gateway/rpc';
import { createLogger, shutdownTelemetry, startTelemetry } from '@gateway/telemetry';
import { connectRedis, openRegistryChangeFeed } from '@gateway/db';
import { createEdgeApp } from './edge-app.js';
import { createRedisRateLimitStore } from './http/rate-limit-store.js';
import { listen } from './listen.js';
import { createEdgeClients } from './service-clients.js';

// One message naming every bad or missing variable.
const config = loadConfigOrExit(process.env, {
  require: ['REGISTRY_SERVICE_URL', 'AUTH_FLOW_SERVICE_URL', 'ONBOARDING_SERVICE_URL'],
});
startTelemetry({
  serviceName: config.otelServiceName ?? 'gateway-edge',
  ...(config.otlpEndpoint === undefined ? {} : { otlpEndpoint: config.otlpEndpoint }),
  ...(config.metricsPort === undefined ? {} : { metricsPort: config.metricsPort }),
});
const logger = createLogger({ service: 'edge', level: config.logLevel });
const remote = (url: string | undefined, name: keyof GatewayConfig) => {
  if (url === undefined) throw new Error(`${name} is required`);
  return { kind: 'remote' as const, baseUrl: url };
};
const clients = createEdgeClients(
  {
    registry: remote(config.registryServiceUrl, 'registryServiceUrl'),
    authFlow: remote(config.authFlowServiceUrl, 'authFlowServiceUrl'),
    onboarding: remote(config.onboardingServiceUrl, 'onboardingServiceUrl'),
  },
  config.serviceCallTimeoutMs,
);
// Rate limit counters shared by every edge instance; without Redis, per process. The Redis
// is one server, the master Sentinel names or a Cluster (config.redis).
const redis =
  config.redis === undefined
    ? undefined
    : await connectRedis({
        ...config.redis,
        keyPrefix: config.redisKeyPrefix,
        timeoutMs: config.databaseTimeoutMs,
      });
// Registry changes made through this edge reach every process on the same Redis;
// without Redis there is one edge and nothing else keeps registry answers.
const changeFeed = await openRegistryChangeFeed(redis, {
  redisKeyPrefix: config.redisKeyPrefix,
  onAnnounceFailed: (error) => logger.warn({ err: error }, 'announcing a registry change failed'),
});
const server = await listen(
  createEdgeApp({
    config,
    logger,
    clients,
    changeFeed,
    ...(redis === undefined ? {} : { rateLimitStore: createRedisRateLimitStore(redis) }),
  }),
  config.port,
);
logger.info({ port: config.port }, 'edge listening');
closeOnShutdownSignals({
  onError: (error) => logger.error({ err: error }, 'shutdown failed'),
  close: async () => {
    await server.close();
    await changeFeed.close();
    redis?.disconnect();
    await shutdownTelemetry();
  },
});
