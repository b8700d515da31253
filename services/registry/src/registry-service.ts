import type { ConnectRouter, ServiceImpl } from '@connectrpc/connect';
import { RegistryService } from '@gateway/contracts';
import { combineRoutes, createHealthRoutes, type ServiceRoutes } from '@gateway/rpc';
import { auditRpcs } from './audit-rpcs.js';
import { credentialRpcs } from './credential-rpcs.js';
import { environmentRpcs } from './environment-rpcs.js';
import { platformRpcs } from './platform-rpcs.js';
import type { RegistryDeps } from './registry-deps.js';
import { signInRpcs } from './sign-in-rpcs.js';

/** RegistryService: each area's RPCs, built from the same deps. */
export function createRegistryServiceImpl(
  deps: RegistryDeps,
  options: { onBackgroundError: (error: unknown) => void },
): ServiceImpl<typeof RegistryService> {
  return {
    ...environmentRpcs(deps),
    ...platformRpcs(deps),
    ...credentialRpcs(deps, options),
    ...auditRpcs(deps),
    ...signInRpcs(deps),
  };
}

export type RegistryServiceOptions = {
  deps: RegistryDeps;
  /** Deadline of each readiness probe of the store. */
  probeTimeoutMs: number;
  onBackgroundError: (error: unknown) => void;
};

/** The registry service's Connect routes: RegistryService and the gRPC health service. */
export function createRegistryRoutes(options: RegistryServiceOptions): ServiceRoutes {
  const { db } = options.deps;
  return combineRoutes(
    (router: ConnectRouter) =>
      router.service(RegistryService, createRegistryServiceImpl(options.deps, options)),
    createHealthRoutes({
      serviceName: RegistryService.typeName,
      probes: [{ name: 'postgres', check: () => db.ping(options.probeTimeoutMs) }],
      probeTimeoutMs: options.probeTimeoutMs,
    }),
  );
}
