import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ConfigError,
  loadConfigOrExit,
  requireConfigValues,
  type GatewayConfig,
} from '@gateway/config';
import { connectRedis, createDatabase } from '@gateway/db';
import { closeOnShutdownSignals } from '@gateway/rpc';
import { createLogger, shutdownTelemetry, startTelemetry, type Logger } from '@gateway/telemetry';
import { startGateway, type RunningGateway } from './gateway-runtime.js';

/**
 * Runs the all-in-one gateway as a process: configuration from `env` (parsed once; a bad
 * value stops the process naming the variable), PostgreSQL from DATABASE_URL or embedded
 * PGlite in GATEWAY_DATA_DIR, Redis when REDIS_URL is set, drain on SIGTERM / Ctrl-C.
 */
export type BeforeEdge = {
  handle: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
  close(): Promise<void>;
};

export async function runGatewayProcess(
  env: NodeJS.ProcessEnv,
  options: {
    onStarted?: (gateway: RunningGateway, config: GatewayConfig, logger: Logger) => void;
    /** Started before the gateway and served on its origin (the development identity service). */
    beforeEdge?: (config: GatewayConfig) => Promise<BeforeEdge>;
    /**
     * Runs once the gateway listens (the first run seeds the demo platform through the admin
     * API and starts it); what it returns is closed first at shutdown. A failure stops the
     * process with exit code 1 and its message, after closing everything else.
     */
    afterStart?: (
      gateway: RunningGateway,
      config: GatewayConfig,
      logger: Logger,
    ) => Promise<{ close(): Promise<void> }>;
  } = {},
): Promise<void> {
  const config = loadConfigOrExit(env);
  try {
    requireConfigValues(config, ['GATEWAY_ENCRYPTION_KEYS']);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`Configuration error:\n${error.message}\n`);
    process.exit(1);
  }
  startTelemetry({
    serviceName: config.otelServiceName ?? 'gateway',
    ...(config.otlpEndpoint === undefined ? {} : { otlpEndpoint: config.otlpEndpoint }),
    ...(config.metricsPort === undefined ? {} : { metricsPort: config.metricsPort }),
  });
  const logger = createLogger({ service: 'gateway', level: config.logLevel });
  const db = await createDatabase(
    config.databaseUrl === undefined
      ? { dataDir: config.dataDir, connectTimeoutMs: config.databaseTimeoutMs }
      : {
          url: config.databaseUrl,
          connectTimeoutMs: config.databaseTimeoutMs,
          statementTimeoutMs: config.databaseTimeoutMs,
        },
  );
  const redis =
    config.redisUrl === undefined
      ? undefined
      : await connectRedis({
          url: config.redisUrl,
          keyPrefix: config.redisKeyPrefix,
          timeoutMs: config.databaseTimeoutMs,
        });
  const beforeEdge =
    options.beforeEdge === undefined ? undefined : await options.beforeEdge(config);
  const gateway = await startGateway({
    config,
    logger,
    db,
    ...(redis === undefined ? {} : { redis }),
    ...(beforeEdge === undefined ? {} : { beforeEdge: beforeEdge.handle }),
  });
  logger.info(
    { port: gateway.port, database: db.kind, store: redis === undefined ? 'sql' : 'redis' },
    'gateway listening',
  );
  options.onStarted?.(gateway, config, logger);
  const afterStart = options.afterStart?.(gateway, config, logger);
  const close = async () => {
    // What afterStart started goes first: its in-flight requests may still need the gateway.
    const started = await afterStart?.catch(() => undefined);
    await started?.close();
    await gateway.close();
    await beforeEdge?.close();
    redis?.disconnect();
    await db.close();
    await shutdownTelemetry();
  };
  closeOnShutdownSignals({
    onError: (error) => logger.error({ err: error }, 'shutdown failed'),
    close: async () => {
      logger.info('shutting down');
      await close();
    },
  });
  await afterStart?.catch(async (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    await close().catch((closeError: unknown) =>
      logger.error({ err: closeError }, 'shutdown failed'),
    );
    process.exit(1);
  });
}
