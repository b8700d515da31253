import type { DescService } from '@bufbuild/protobuf';
import type { ConnectRouter, ServiceImpl } from '@connectrpc/connect';

/**
 * One service's implementation, made once per process: split mode serves it over HTTP/2
 * (routesOf), the all-in-one process calls it directly (service-clients.ts).
 */
export type ServiceImplementation = {
  readonly service: DescService;
  readonly implementation: Partial<ServiceImpl<DescService>>;
};

/** What a service exposes: its Connect routes (its own service plus Health). */
export type ServiceRoutes = (router: ConnectRouter) => void;

export function implementationOf<S extends DescService>(
  service: S,
  implementation: Partial<ServiceImpl<S>>,
): ServiceImplementation {
  return { service, implementation: implementation as Partial<ServiceImpl<DescService>> };
}

/** The Connect routes that serve `implementations` over the wire. */
export function routesOf(implementations: readonly ServiceImplementation[]): ServiceRoutes {
  return (router) => {
    for (const { service, implementation } of implementations) {
      router.service(service, implementation);
    }
  };
}

/** The implementation of `service` among `implementations`; empty (every call UNIMPLEMENTED) when absent. */
export function findImplementation<S extends DescService>(
  implementations: readonly ServiceImplementation[],
  service: S,
): Partial<ServiceImpl<S>> {
  const found = implementations.find((entry) => entry.service.typeName === service.typeName);
  return (found?.implementation ?? {}) as Partial<ServiceImpl<S>>;
}
