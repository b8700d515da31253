import { Code, ConnectError } from '@connectrpc/connect';
import { Health, HealthCheckResponse_ServingStatus } from '@gateway/contracts';
import { implementationOf, type ServiceImplementation } from './service-implementations.js';

/** One dependency a service needs to answer requests: its store, mostly. */
export type ReadinessProbe = {
  /** Short name shown in readiness details, e.g. `postgres`, `redis`. */
  name: string;
  /** Resolves when the dependency answers; rejects (or times out) when it does not. */
  check(): Promise<void>;
};

export type ReadinessReport = { ready: boolean; probes: Record<string, 'up' | 'down'> };

/** Runs every probe at once, each bounded by `timeoutMs`. Never rejects. */
export async function checkReadiness(
  probes: readonly ReadinessProbe[],
  timeoutMs: number,
): Promise<ReadinessReport> {
  const results = await Promise.all(
    probes.map(async (probe) => [probe.name, await probeAnswers(probe, timeoutMs)] as const),
  );
  return {
    ready: results.every(([, up]) => up),
    probes: Object.fromEntries(results.map(([name, up]) => [name, up ? 'up' : 'down'])),
  };
}

async function probeAnswers(probe: ReadinessProbe, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([probe.check().then(() => true as const), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The standard gRPC health-checking service (grpc.health.v1.Health). `Check` for the
 * empty service name or for `serviceName` (e.g. `registry.v1.RegistryService`) runs the
 * readiness probes live, so SERVING means the store answered just now. Kubernetes gRPC
 * probes, grpc_health_probe and the edge's /health/ready all use it.
 */
export function createHealthImplementation(options: {
  serviceName: string;
  probes: readonly ReadinessProbe[];
  probeTimeoutMs: number;
}): ServiceImplementation {
  return implementationOf(Health, {
    async check(request) {
      if (request.service !== '' && request.service !== options.serviceName) {
        throw new ConnectError(`unknown service ${request.service}`, Code.NotFound);
      }
      const report = await checkReadiness(options.probes, options.probeTimeoutMs);
      return {
        status: report.ready
          ? HealthCheckResponse_ServingStatus.SERVING
          : HealthCheckResponse_ServingStatus.NOT_SERVING,
      };
    },
    // eslint-disable-next-line require-yield
    async *watch() {
      throw new ConnectError('Watch is not supported; poll Check.', Code.Unimplemented);
    },
  });
}
