import type { ConnectRouter } from '@connectrpc/connect';
import { OnboardingService } from '@gateway/contracts';
import type { JsonObject } from '@bufbuild/protobuf';
import type { Database } from '@gateway/db';
import { evaluateOnboarding } from './onboarding-evaluation.js';
import {
  archivePlatformField,
  createPlatformField,
  getPlatformField,
  listPlatformFields,
  updatePlatformField,
  type PlatformFieldView,
} from './platform-fields.js';
import { applyIdentityClaims } from './profile-claims.js';
import { combineRoutes, createHealthRoutes, type ServiceRoutes } from '@gateway/rpc';

export type OnboardingServiceOptions = {
  db: Database;
  /** Deadline of each readiness probe of the store. */
  probeTimeoutMs: number;
};

/** A stored platform field as its PlatformField message. */
function fieldMessage(view: PlatformFieldView) {
  return {
    id: view.id,
    platformKey: view.platformKey,
    fieldKey: view.fieldKey,
    active: view.active,
    definition: view.definition as JsonObject,
    createdAt: view.createdAt.toISOString(),
    updatedAt: view.updatedAt.toISOString(),
  };
}

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
        async listPlatformFields(request) {
          const fields = await listPlatformFields(options.db, request.platformKey);
          return { fields: fields.map(fieldMessage) };
        },
        async createPlatformField(request) {
          const field = await createPlatformField(
            options.db,
            request.platformKey,
            request.definition,
          );
          return { field: fieldMessage(field) };
        },
        async getPlatformField(request) {
          const field = await getPlatformField(options.db, request.platformKey, request.fieldKey);
          return { field: fieldMessage(field) };
        },
        async updatePlatformField(request) {
          const { field, changed } = await updatePlatformField(
            options.db,
            request.platformKey,
            request.fieldKey,
            request.patch,
          );
          return { field: fieldMessage(field), changed };
        },
        async archivePlatformField(request) {
          const { field, changed } = await archivePlatformField(
            options.db,
            request.platformKey,
            request.fieldKey,
          );
          return { field: fieldMessage(field), changed };
        },
      }),
    createHealthRoutes({
      serviceName: OnboardingService.typeName,
      probes: [{ name: 'postgres', check: () => options.db.ping(options.probeTimeoutMs) }],
      probeTimeoutMs: options.probeTimeoutMs,
    }),
  );
}
