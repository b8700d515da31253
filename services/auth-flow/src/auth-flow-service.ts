import type { ConnectRouter } from '@connectrpc/connect';
import { AuthFlowService } from '@gateway/contracts';
import type { Database } from '@gateway/db';
import {
  combineRoutes,
  createHealthRoutes,
  type ReadinessProbe,
  type ServiceRoutes,
} from '@gateway/rpc';
import type { Redis } from 'ioredis';

export type AuthFlowServiceOptions = {
  db: Database;
  /** Redis holds transactions, handoffs and sessions; absent in the embedded default. */
  redis?: Redis;
  probeTimeoutMs: number;
};

/** The auth-flow service's Connect routes: AuthFlowService and the gRPC health service. */
export function createAuthFlowRoutes(options: AuthFlowServiceOptions): ServiceRoutes {
  const probes: ReadinessProbe[] = [
    { name: 'postgres', check: () => options.db.ping(options.probeTimeoutMs) },
  ];
  const { redis } = options;
  if (redis !== undefined) {
    probes.push({ name: 'redis', check: async () => void (await redis.ping()) });
  }
  return combineRoutes(
    (router: ConnectRouter) => router.service(AuthFlowService, {}),
    createHealthRoutes({
      serviceName: AuthFlowService.typeName,
      probes,
      probeTimeoutMs: options.probeTimeoutMs,
    }),
  );
}
