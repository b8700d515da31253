import type { ServiceImpl } from '@connectrpc/connect';
import { RegistryService } from '@gateway/contracts';
import {
  createHealthImplementation,
  implementationOf,
  type ServiceImplementation,
} from '@gateway/rpc';
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

/** The registry service, made once per process: RegistryService and the gRPC health service. */
export function createRegistryImplementations(
  options: RegistryServiceOptions,
): ServiceImplementation[] {
  const { db } = options.deps;
  return [
    implementationOf(RegistryService, createRegistryServiceImpl(options.deps, options)),
    createHealthImplementation({
      serviceName: RegistryService.typeName,
      probes: [{ name: 'postgres', check: () => db.ping(options.probeTimeoutMs) }],
      probeTimeoutMs: options.probeTimeoutMs,
    }),
  ];
}
