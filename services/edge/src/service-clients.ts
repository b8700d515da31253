import { createClient, type Client } from '@connectrpc/connect';
import {
  AuthFlowService,
  Health,
  OnboardingService,
  ProfileService,
  RegistryService,
} from '@gateway/contracts';
import { createServiceTransport, type ServiceTarget } from '@gateway/rpc';

/** Where the edge finds each internal service (in process, or over HTTP/2 in split mode). */
export type EdgeServiceTargets = {
  registry: ServiceTarget;
  authFlow: ServiceTarget;
  onboarding: ServiceTarget;
};

export type InternalServiceName = keyof EdgeServiceTargets;

/** The Connect clients the edge's routes call. Later issues add each service's own client. */
export type EdgeClients = {
  health: Record<InternalServiceName, Client<typeof Health>>;
  registry: Client<typeof RegistryService>;
  authFlow: Client<typeof AuthFlowService>;
  onboarding: Client<typeof OnboardingService>;
  /** Served by the onboarding service (spec 2.5, 4.8 profile and avatar). */
  profile: Client<typeof ProfileService>;
};

export function createEdgeClients(targets: EdgeServiceTargets, timeoutMs: number): EdgeClients {
  const transports = {
    registry: createServiceTransport(targets.registry, { timeoutMs }),
    authFlow: createServiceTransport(targets.authFlow, { timeoutMs }),
    onboarding: createServiceTransport(targets.onboarding, { timeoutMs }),
  };
  return {
    health: {
      registry: createClient(Health, transports.registry),
      authFlow: createClient(Health, transports.authFlow),
      onboarding: createClient(Health, transports.onboarding),
    },
    registry: createClient(RegistryService, transports.registry),
    authFlow: createClient(AuthFlowService, transports.authFlow),
    onboarding: createClient(OnboardingService, transports.onboarding),
    profile: createClient(ProfileService, transports.onboarding),
  };
}
