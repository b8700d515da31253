import type { Logger } from '@gateway/telemetry';
import { createLogger } from '@gateway/telemetry';
import { createMemoryLog } from '@gateway/telemetry/testing';
import { startServiceServer, type ServiceServer } from '../service-server.js';
import type { ServiceRoutes } from '../service-implementations.js';
import { createServiceInterceptors } from '../service-interceptors.js';

/**
 * A service server on 127.0.0.1 (a free port) with the services' own interceptors, as a
 * service process runs it, for tests that call it over HTTP/2. Its log goes to memory unless
 * the test passes a logger of its own.
 */
export function startLocalServiceServer(
  routes: ServiceRoutes,
  options: { service: string; logger?: Logger },
): Promise<ServiceServer> {
  const logger =
    options.logger ??
    createLogger({ service: options.service, destination: createMemoryLog().destination });
  return startServiceServer({
    routes,
    interceptors: createServiceInterceptors(logger),
    port: 0,
    host: '127.0.0.1',
  });
}
