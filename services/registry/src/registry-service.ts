import type { ConnectRouter } from '@connectrpc/connect';
import { RegistryService } from '@gateway/contracts';
import type { Database } from '@gateway/db';
import { combineRoutes, createHealthRoutes, type ServiceRoutes } from '@gateway/rpc';

export type RegistryServiceOptions = {
  db: Database;
  /** Deadline of each readiness probe of the store. */
  probeTimeoutMs: number;
};

/** The registry service's Connect routes: RegistryService and the gRPC health service. */
export function createRegistryRoutes(options: RegistryServiceOptions): ServiceRoutes {
  return combineRoutes(
    (router: ConnectRouter) => router.service(RegistryService, {}),
    createHealthRoutes({
      serviceName: RegistryService.typeName,
      probes: [{ name: 'postgres', check: () => options.db.ping(options.probeTimeoutMs) }],
      probeTimeoutMs: options.probeTimeoutMs,
    }),
  );
}
