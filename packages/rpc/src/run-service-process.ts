import { loadConfigOrExit, type GatewayConfig, type GatewayEnvName } from '@gateway/config';
import { createLogger, shutdownTelemetry, startTelemetry, type Logger } from '@gateway/telemetry';
import { routesOf, type ServiceImplementation } from './service-implementations.js';
import { createServiceInterceptors } from './service-interceptors.js';
import { startServiceServer } from './service-server.js';
import { closeOnShutdownSignals } from './shutdown-signals.js';

/** A started service: its implementations (one of each service), served over HTTP/2. */
export type StartedService = {
  implementations: readonly ServiceImplementation[];
  close(): Promise<void>;
};

/**
 * The `main` of an internal service in split mode: parse the configuration once (a bad
 * value stops the process naming the variable), start tracing and logging, build the
 * service, serve it over HTTP/2 on PORT, and drain on SIGTERM.
 */
export async function runServiceProcess(options: {
  service: string;
  requiredConfig: readonly GatewayEnvName[];
  start(context: { config: GatewayConfig; logger: Logger }): Promise<StartedService>;
}): Promise<void> {
  // One message naming every bad or missing variable.
  const config = loadConfigOrExit(process.env, { require: options.requiredConfig });
  startTelemetry({
    serviceName: config.otelServiceName ?? `gateway-${options.service}`,
    ...(config.otlpEndpoint === undefined ? {} : { otlpEndpoint: config.otlpEndpoint }),
    ...(config.metricsPort === undefined ? {} : { metricsPort: config.metricsPort }),
  });
  const logger = createLogger({ service: options.service, level: config.logLevel });
  const started = await options.start({ config, logger });
  const server = await startServiceServer({
    routes: routesOf(started.implementations),
    interceptors: createServiceInterceptors(logger),
    port: config.port,
  });
  logger.info(
    { port: server.port },
    `${options.service} service listening (HTTP/2 Connect, gRPC, gRPC-Web)`,
  );
  closeOnShutdownSignals({
    onError: (error) => logger.error({ err: error }, 'shutdown failed'),
    close: async () => {
      logger.info('shutting down');
      await server.close();
      await started.close();
      await shutdownTelemetry();
    },
  });
}
