import type { ServiceImpl } from '@connectrpc/connect';
import { OnboardingService, ProfileService } from '@gateway/contracts';
import { fromJson, type JsonObject } from '@bufbuild/protobuf';
import { ValueSchema } from '@bufbuild/protobuf/wkt';
import type { Database } from '@gateway/db';
import {
  archiveGlobalField,
  createGlobalField,
  getGlobalField,
  listGlobalFields,
  updateGlobalField,
  type GlobalFieldView,
} from './global-fields.js';
import {
  completeMembership,
  evaluateStatus,
  getRequirements,
  putValues,
  type OnboardingStatus,
} from './onboarding-values.js';
import {
  archivePlatformField,
  createPlatformField,
  getPlatformField,
  listPlatformFields,
  updatePlatformField,
  type PlatformFieldView,
} from './platform-fields.js';
import { applyIdentityClaims, profileClaimValues } from './profile-claims.js';
import { createProfileServiceImpl } from './profile-service.js';
import {
  createHealthImplementation,
  implementationOf,
  type ServiceImplementation,
} from '@gateway/rpc';
import { SchemaCache } from './schema-cache.js';
import { platformSchema, schemaVersions } from './schema-versions.js';

export type OnboardingServiceOptions = {
  db: Database;
  /** Deadline of each readiness probe of the store. */
  probeTimeoutMs: number;
  /**
   * Longest the active field definitions are kept in this process (default and most: 5000;
   * 0 keeps nothing). See schema-cache.ts.
   */
  schemaCacheTtlMs?: number;
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

function globalFieldMessage(view: GlobalFieldView) {
  return {
    profileFieldKey: view.profileFieldKey,
    active: view.active,
    definition: view.definition as JsonObject,
    createdAt: view.createdAt.toISOString(),
    updatedAt: view.updatedAt.toISOString(),
  };
}

function statusMessage(status: OnboardingStatus) {
  return {
    globalStatus: status.globalStatus,
    globalMissingFields: status.globalMissingFields,
    platformStatus: status.platformStatus ?? '',
    platformMissingFields: status.platformMissingFields,
    requirementVersion: status.requirementVersion,
    ...(status.completedAt === null ? {} : { completedAt: status.completedAt.toISOString() }),
  };
}

/** An empty platform key names the global scope. */
const platformOf = (platformKey: string): string | undefined =>
  platformKey === '' ? undefined : platformKey;

/**
 * The onboarding service, made once per process: OnboardingService, ProfileService (spec 2.5,
 * 4.8: the signed-in user's own profile and avatar) and the gRPC health service.
 */
export function createOnboardingImplementations(
  options: OnboardingServiceOptions,
): ServiceImplementation[] {
  const { db } = options;
  const schemas = new SchemaCache(
    options.schemaCacheTtlMs === undefined ? {} : { ttlMs: options.schemaCacheTtlMs },
  );
  return [
    implementationOf(OnboardingService, {
      ...userOnboardingRpcs(db, schemas),
      ...platformFieldRpcs(db, schemas),
      ...globalFieldRpcs(db, schemas),
    }),
    implementationOf(ProfileService, createProfileServiceImpl(db, schemas)),
    createHealthImplementation({
      serviceName: OnboardingService.typeName,
      probes: [{ name: 'postgres', check: () => db.ping(options.probeTimeoutMs) }],
      probeTimeoutMs: options.probeTimeoutMs,
    }),
  ];
}

type Rpcs = ServiceImpl<typeof OnboardingService>;

type UserOnboardingRpcs = Pick<
  Rpcs,
  | 'evaluateOnboarding'
  | 'applyIdentityClaims'
  | 'getRequirementVersions'
  | 'getRequirements'
  | 'putValues'
  | 'completeOnboarding'
  | 'bootstrapMembership'
>;

/** The RPCs that tell where a user stands in onboarding and record what the user enters. */
function userOnboardingRpcs(db: Database, schemas: SchemaCache): UserOnboardingRpcs {
  const { knex } = db;
  return {
    async evaluateOnboarding(request) {
      const status = await evaluateStatus(knex, schemas, {
        userId: request.userId,
        platformKey: platformOf(request.platformKey),
      });
      return { status: statusMessage(status) };
    },
    async applyIdentityClaims(request) {
      const { avatarUrl } = await applyIdentityClaims(db, {
        userId: request.userId,
        picture: request.picture,
        name: request.name,
      });
      return avatarUrl === undefined ? {} : { avatarUrl };
    },
    async getRequirementVersions(request) {
      const versions = await schemaVersions(knex, request.platformKeys.map(platformSchema));
      return {
        versions: Object.fromEntries(
          request.platformKeys.map((key) => [key, versions.get(platformSchema(key)) ?? 0]),
        ),
      };
    },
    getRequirements: getRequirementsRpc(db, schemas),
    async putValues(request) {
      const status = await putValues(knex, schemas, {
        userId: request.userId,
        platformKey: platformOf(request.platformKey),
        requirementVersion: request.requirementVersion,
        values: request.values ?? {},
      });
      return { status: statusMessage(status) };
    },
    completeOnboarding: async (request) => ({
      status: statusMessage(
        await completeMembership(knex, schemas, {
          userId: request.userId,
          platformKey: request.platformKey,
          refuse: true,
        }),
      ),
    }),
    bootstrapMembership: bootstrapMembershipRpc(db, schemas),
  };
}

/** The fields a user still has to fill in, with the values already stored. */
function getRequirementsRpc(db: Database, schemas: SchemaCache): Rpcs['getRequirements'] {
  return async (request) => {
    const answer = await getRequirements(db.knex, schemas, {
      userId: request.userId,
      platformKey: platformOf(request.platformKey),
    });
    return {
      requirementVersion: answer.requirementVersion,
      requirements: answer.requirements.map((requirement) => ({
        scope: requirement.scope,
        definition: requirement.definition as JsonObject,
        currentValue: fromJson(ValueSchema, requirement.currentValue),
      })),
    };
  };
}

/** Makes a user a member of a platform at sign-in, taking profile values from identity claims. */
function bootstrapMembershipRpc(db: Database, schemas: SchemaCache): Rpcs['bootstrapMembership'] {
  return async (request) => {
    const claims = request.identityClaims;
    const status = await completeMembership(db.knex, schemas, {
      userId: request.userId,
      platformKey: request.platformKey,
      refuse: false,
      ...(claims === undefined ? {} : { claims: profileClaimValues(claims) }),
    });
    return { status: statusMessage(status) };
  };
}

type PlatformFieldRpcs = Pick<
  Rpcs,
  | 'listPlatformFields'
  | 'createPlatformField'
  | 'getPlatformField'
  | 'updatePlatformField'
  | 'archivePlatformField'
>;

/** The RPCs that manage the onboarding fields one platform asks for. */
function platformFieldRpcs(db: Database, schemas: SchemaCache): PlatformFieldRpcs {
  return {
    async listPlatformFields(request) {
      const fields = await listPlatformFields(db, request.platformKey);
      return { fields: fields.map(fieldMessage) };
    },
    async createPlatformField(request) {
      const field = await createPlatformField(db, schemas, request.platformKey, request.definition);
      return { field: fieldMessage(field) };
    },
    async getPlatformField(request) {
      const field = await getPlatformField(db, request.platformKey, request.fieldKey);
      return { field: fieldMessage(field) };
    },
    async updatePlatformField(request) {
      const { field, changed } = await updatePlatformField(
        db,
        schemas,
        request.platformKey,
        request.fieldKey,
        request.patch,
      );
      return { field: fieldMessage(field), changed };
    },
    async archivePlatformField(request) {
      const { field, changed } = await archivePlatformField(
        db,
        schemas,
        request.platformKey,
        request.fieldKey,
      );
      return { field: fieldMessage(field), changed };
    },
  };
}

type GlobalFieldRpcs = Pick<
  Rpcs,
  | 'listGlobalFields'
  | 'createGlobalField'
  | 'getGlobalField'
  | 'updateGlobalField'
  | 'archiveGlobalField'
>;

/** The RPCs that manage the global profile fields every platform shares. */
function globalFieldRpcs(db: Database, schemas: SchemaCache): GlobalFieldRpcs {
  return {
    async listGlobalFields() {
      const fields = await listGlobalFields(db.knex);
      return { fields: fields.map(globalFieldMessage) };
    },
    createGlobalField: async (request) => ({
      field: globalFieldMessage(await createGlobalField(db, schemas, request.definition)),
    }),
    getGlobalField: async (request) => ({
      field: globalFieldMessage(await getGlobalField(db, request.profileFieldKey)),
    }),
    async updateGlobalField(request) {
      const { field, changed } = await updateGlobalField(
        db,
        schemas,
        request.profileFieldKey,
        request.patch,
      );
      return { field: globalFieldMessage(field), changed };
    },
    async archiveGlobalField(request) {
      const { field, changed } = await archiveGlobalField(db, schemas, request.profileFieldKey);
      return { field: globalFieldMessage(field), changed };
    },
  };
}
