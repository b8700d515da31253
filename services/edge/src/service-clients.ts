import { createClient, type Client, type ServiceImpl, type Transport } from '@connectrpc/connect';
import {
  AuthFlowService,
  Health,
  OnboardingService,
  ProfileService,
  RegistryService,
  SessionIntrospectionService,
} from '@gateway/contracts';
import { createDirectClient, createServiceTransport, type ServiceTarget } from '@gateway/rpc';
import { introspectingTogether } from './introspection-batches.js';

type InProcessTarget = Extract<ServiceTarget, { kind: 'in-process' }>;

/** Where the edge finds each internal service (in process, or over HTTP/2 in split mode). */
export type EdgeServiceTargets = {
  registry: ServiceTarget;
  /**
   * In the all-in-one process, with its implementation, which the edge then calls directly
   * (createDirectClient): every introspection goes through this client, and Connect's router
   * transport would encode and decode each call at many times the cost of the rest of it.
   */
  authFlow:
    ServiceTarget | (InProcessTarget & { implementation: ServiceImpl<typeof AuthFlowService> });
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
    authFlow: authFlowClient(targets.authFlow, transports.authFlow, timeoutMs),
    onboarding: createClient(OnboardingService, transports.onboarding),
    profile: createClient(ProfileService, transports.onboarding),
  };
}

/**
 * In process: a direct client of the implementation, else through the router transport.
 * Over the wire: introspections of one turn together (introspection-batches.ts).
 */
function authFlowClient(
  target: EdgeServiceTargets['authFlow'],
  transport: Transport,
  timeoutMs: number,
): Client<typeof AuthFlowService> {
  if ('implementation' in target) {
    return createDirectClient(AuthFlowService, target.implementation, {
      serverInterceptors: target.serverInterceptors,
      timeoutMs,
    });
  }
  const client = createClient(AuthFlowService, transport);
  if (target.kind === 'in-process') return client;
  return introspectingTogether(client, createClient(SessionIntrospectionService, transport));
}
