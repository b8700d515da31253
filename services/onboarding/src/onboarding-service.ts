import type { ConnectRouter } from '@connectrpc/connect';
import { OnboardingService } from '@gateway/contracts';
import type { Database } from '@gateway/db';
import { evaluateOnboarding } from './onboarding-evaluation.js';
import { applyIdentityClaims } from './profile-claims.js';
import { combineRoutes, createHealthRoutes, type ServiceRoutes } from '@gateway/rpc';

export type OnboardingServiceOptions = {
  db: Database;
  /** Deadline of each readiness probe of the store. */
  probeTimeoutMs: number;
};

/** The onboarding service's Connect routes: OnboardingService and the gRPC health service. */
export function createOnboardingRoutes(options: OnboardingServiceOptions): ServiceRoutes {
  return combineRoutes(
    (router: ConnectRouter) =>
      router.service(OnboardingService, {
        evaluateOnboarding: (request) =>
          evaluateOnboarding(options.db, {
            userId: request.userId,
            platformKey: request.platformKey,
          }),
        async applyIdentityClaims(request) {
          const { avatarUrl } = await applyIdentityClaims(options.db, {
            userId: request.userId,
            picture: request.picture,
            name: request.name,
          });
          return avatarUrl === undefined ? {} : { avatarUrl };
        },
      }),
    createHealthRoutes({
      serviceName: OnboardingService.typeName,
      probes: [{ name: 'postgres', check: () => options.db.ping(options.probeTimeoutMs) }],
      probeTimeoutMs: options.probeTimeoutMs,
    }),
  );
}
