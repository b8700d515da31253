import type { Client } from '@connectrpc/connect';
import {
  AuthFlowService,
  Health,
  LoginBatchService,
  OnboardingService,
  ProfileService,
  RegistryService,
  SessionIntrospectionService,
} from '@gateway/contracts';
import { connectService, type ServiceConnection, type ServiceTarget } from '@gateway/rpc';
import { authFlowCallsTogether } from './auth-flow-batches.js';

/**
 * Where the edge finds each internal service: in the all-in-one process its implementations
 * (called directly), in split mode its address (HTTP/2).
 */
export type EdgeServiceTargets = {
  registry: ServiceTarget;
  authFlow: ServiceTarget;
  onboarding: ServiceTarget;
};

export type InternalServiceName = keyof EdgeServiceTargets;

/** The Connect clients the edge's routes call. */
export type EdgeClients = {
  health: Record<InternalServiceName, Client<typeof Health>>;
  registry: Client<typeof RegistryService>;
  authFlow: Client<typeof AuthFlowService>;
  onboarding: Client<typeof OnboardingService>;
  /** Served by the onboarding service (spec 2.5, 4.8 profile and avatar). */
  profile: Client<typeof ProfileService>;
};

export function createEdgeClients(targets: EdgeServiceTargets, timeoutMs: number): EdgeClients {
  const connections = {
    registry: connectService(targets.registry, { timeoutMs }),
    authFlow: connectService(targets.authFlow, { timeoutMs }),
    onboarding: connectService(targets.onboarding, { timeoutMs }),
  };
  return {
    health: {
      registry: connections.registry.client(Health),
      authFlow: connections.authFlow.client(Health),
      onboarding: connections.onboarding.client(Health),
    },
    registry: connections.registry.client(RegistryService),
    authFlow: authFlowClient(connections.authFlow),
    onboarding: connections.onboarding.client(OnboardingService),
    profile: connections.onboarding.client(ProfileService),
  };
}

/**
 * Over the wire, the introspections, starts and exchanges of one turn go together
 * (auth-flow-batches.ts).
 */
function authFlowClient(connection: ServiceConnection): Client<typeof AuthFlowService> {
  const client = connection.client(AuthFlowService);
  if (connection.kind === 'in-process') return client;
  return authFlowCallsTogether(
    client,
    connection.client(SessionIntrospectionService),
    connection.client(LoginBatchService),
  );
}
