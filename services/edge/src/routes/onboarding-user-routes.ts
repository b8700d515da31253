import { z } from 'zod';
import { toJson, type JsonObject } from '@bufbuild/protobuf';
import { ValueSchema } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import type { OnboardingStatus, Platform, RegistryService, Requirement } from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import { FIELD_KEY_PATTERN } from '@gateway/field-rules';
import { defineOperation, type AnyOperation } from '../http/operation.js';
import { json, userErrorResponses } from './openapi-responses.js';
import { PLATFORM_KEY_PATTERN } from './registry-schemas.js';

// Spec 4.8 (session bootstrap) and 4.9: the signed-in user's onboarding, per platform and
// for the global profile fields. The platform must be active and bound to the user's
// identity environment (users are per environment, spec 1 rule 3); anything else is 404.

const PlatformParams = z.object({ platformKey: z.string().regex(PLATFORM_KEY_PATTERN) }).strict();

const MAX_VALUES = 500;

/** Spec 4.9 PUT values. The envelope is ours: the spec leaves it open. */
const PutValuesBody = z
  .object({
    requirementVersion: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        'The `requirementVersion` of the requirements the values were entered against. ' +
          'When it is no longer current the save is refused with 404 (schema changed).',
      ),
    values: z
      .record(z.string().regex(FIELD_KEY_PATTERN), z.unknown())
      .refine((values) => Object.keys(values).length <= MAX_VALUES, {
        message: `must hold at most ${MAX_VALUES} values`,
      })
      .describe(
        'Field key to typed value; `null` (or `[]` for MULTI_SELECT) clears a value. ' +
          'Global fields are keyed by their profile key.',
      ),
  })
  .strict()
  .meta({ id: 'OnboardingValues' });

const BootstrapBody = z
  .object({ platformKey: z.string().regex(PLATFORM_KEY_PATTERN) })
  .strict()
  .meta({ id: 'SessionBootstrapRequest' });

const FieldValueJson = z
  .union([z.string(), z.number(), z.boolean(), z.array(z.string()), z.null()])
  .meta({ id: 'OnboardingFieldValue' });

const RequirementJson = z
  .object({
    scope: z.enum(['GLOBAL', 'PLATFORM']),
    platformId: z.uuid().nullable().describe('Null for global fields.'),
    fieldKey: z.string(),
    label: z.string(),
    fieldType: z.string(),
    source: z.enum(['PROFILE_FIELD', 'CUSTOM_FIELD']),
    profileFieldKey: z.string().nullable(),
    description: z.string().nullable(),
    placeholder: z.string().nullable(),
    sortOrder: z.number().int(),
    required: z.boolean(),
    options: z.array(z.object({ value: z.string(), label: z.string() })),
    validation: z.record(z.string(), z.unknown()),
    uiConfig: z.record(z.string(), z.unknown()),
    currentValue: FieldValueJson,
  })
  .meta({ id: 'OnboardingRequirement' });

const RequirementsJson = z
  .object({
    platformKey: z.string(),
    platformDisplayName: z.string(),
    requirementVersion: z.number().int(),
    requirements: z.array(RequirementJson),
  })
  .meta({ id: 'OnboardingRequirements' });

const GlobalRequirementsJson = z
  .object({
    requirementVersion: z.number().int().describe('The global fields’ version.'),
    requirements: z.array(RequirementJson),
  })
  .meta({ id: 'GlobalOnboardingRequirements' });

const GlobalStatusJson = z
  .object({
    status: z.enum(['COMPLETE', 'INCOMPLETE']),
    missingFields: z.array(z.string()),
  })
  .meta({ id: 'GlobalOnboardingStatus' });

const GlobalStatusWithVersionJson = GlobalStatusJson.extend({
  requirementVersion: z.number().int(),
}).meta({ id: 'GlobalOnboardingStatusWithVersion' });

const PlatformStatusJson = z
  .object({
    platformKey: z.string(),
    status: z.enum(['NOT_STARTED', 'IN_PROGRESS', 'COMPLETE']),
    missingFields: z.array(z.string()).describe('Required platform fields without a valid value.'),
    requirementVersion: z.number().int(),
    completedAt: z.iso.datetime({ offset: true }).nullable(),
    global: GlobalStatusJson,
  })
  .meta({ id: 'OnboardingStatus' });

const BootstrapJson = z
  .object({
    userId: z.uuid(),
    platformKey: z.string(),
    environment: z.object({ key: z.string() }),
    onboarding: z.object({
      status: z.enum(['NOT_STARTED', 'IN_PROGRESS', 'COMPLETE']),
      requirementVersion: z.number().int(),
      missingFields: z.array(z.string()),
      canCompleteCentrally: z.boolean(),
    }),
    profile: GlobalStatusJson,
  })
  .meta({ id: 'SessionBootstrap' });

type StatusJson = z.infer<typeof PlatformStatusJson>;

function statusOf(status: OnboardingStatus | undefined) {
  if (status === undefined) throw new Error('onboarding answered no status');
  return status;
}

function globalStatusJson(status: OnboardingStatus): z.infer<typeof GlobalStatusJson> {
  return {
    status: status.globalStatus as 'COMPLETE' | 'INCOMPLETE',
    missingFields: status.globalMissingFields,
  };
}

function platformStatusJson(platformKey: string, status: OnboardingStatus): StatusJson {
  return {
    platformKey,
    status: status.platformStatus as StatusJson['status'],
    missingFields: status.platformMissingFields,
    requirementVersion: status.requirementVersion,
    completedAt: status.completedAt ?? null,
    global: globalStatusJson(status),
  };
}

function requirementJson(requirement: Requirement, platformId: string | null): JsonObject {
  return {
    scope: requirement.scope,
    platformId: requirement.scope === 'GLOBAL' ? null : platformId,
    ...requirement.definition,
    currentValue:
      requirement.currentValue === undefined ? null : toJson(ValueSchema, requirement.currentValue),
  };
}

const USER = { kind: 'user' } as const;
const tags = ['Onboarding'];

type Registry = Pick<Client<typeof RegistryService>, 'getPlatform'>;

/** The platform of a user request: active and in the caller's environment, else 404. */
async function userPlatform(
  registry: Registry,
  platformKey: string,
  environmentKey: string,
): Promise<Platform> {
  const { platform } = await registry.getPlatform({ platformKey });
  if (
    platform === undefined ||
    !platform.active ||
    platform.identityEnvironment?.key !== environmentKey
  ) {
    throw new GatewayError('NOT_FOUND', 'Unknown or inactive platform.');
  }
  return platform;
}

const bootstrapCentralSession = defineOperation({
  auth: USER,
  response: { kind: 'json', status: 200 },
  operationId: 'bootstrapCentralSession',
  method: 'post',
  path: '/v1/session/bootstrap',
  summary: 'Bootstrap the signed-in user’s membership and onboarding for a platform.',
  description:
    'Idempotent. The local user exists once authenticated; this creates the platform ' +
    'membership (NOT_STARTED) when missing, records COMPLETE when nothing required is ' +
    'missing, and answers where onboarding stands. A cookie-authenticated call ' +
    'needs an allowlisted `Origin`.',
  tags: ['Session'],
  body: BootstrapBody,
  responses: {
    200: json('Where the user stands.', BootstrapJson),
    ...userErrorResponses(400, 404),
  },
  handler: async ({ body, caller, services }) => {
    const { onboarding } = services.clients;
    const platform = await userPlatform(
      services.clients.registry,
      body.platformKey,
      caller.environmentKey,
    );
    const status = statusOf(
      (
        await onboarding.bootstrapMembership({
          userId: caller.userId,
          platformKey: platform.platformKey,
        })
      ).status,
    );
    return {
      userId: caller.userId,
      platformKey: platform.platformKey,
      environment: { key: caller.environmentKey },
      onboarding: {
        status: status.platformStatus,
        requirementVersion: status.requirementVersion,
        missingFields: status.platformMissingFields,
        canCompleteCentrally: platform.centralOnboardingEnabled,
      },
      profile: globalStatusJson(status),
    };
  },
});

const getMyGlobalOnboardingRequirements = defineOperation({
  auth: USER,
  response: { kind: 'json', status: 200 },
  operationId: 'getMyGlobalOnboardingRequirements',
  method: 'get',
  path: '/v1/onboarding/global/requirements',
  summary: 'The global profile fields, with the user’s current values.',
  description: 'Active fields only, in render order (`sortOrder`, then creation time).',
  tags,
  responses: {
    200: json('The requirements.', GlobalRequirementsJson),
    ...userErrorResponses(),
  },
  handler: async ({ caller, services }) => {
    const { onboarding } = services.clients;
    const answer = await onboarding.getRequirements({
      userId: caller.userId,
      platformKey: '',
    });
    return {
      requirementVersion: answer.requirementVersion,
      requirements: answer.requirements.map((requirement) => requirementJson(requirement, null)),
    };
  },
});

const getMyGlobalOnboardingStatus = defineOperation({
  auth: USER,
  response: { kind: 'json', status: 200 },
  operationId: 'getMyGlobalOnboardingStatus',
  method: 'get',
  path: '/v1/onboarding/global/status',
  summary: 'Whether every required global profile field has a valid value.',
  tags,
  responses: {
    200: json('The global status.', GlobalStatusWithVersionJson),
    ...userErrorResponses(),
  },
  handler: async ({ caller, services }) => {
    const { onboarding } = services.clients;
    const status = statusOf(
      (
        await onboarding.evaluateOnboarding({
          userId: caller.userId,
          platformKey: '',
        })
      ).status,
    );
    return {
      ...globalStatusJson(status),
      requirementVersion: status.requirementVersion,
    } satisfies z.infer<typeof GlobalStatusWithVersionJson>;
  },
});

const putMyGlobalOnboardingValues = defineOperation({
  auth: USER,
  response: { kind: 'json', status: 200 },
  operationId: 'putMyGlobalOnboardingValues',
  method: 'put',
  path: '/v1/onboarding/global/values',
  summary: 'Save global profile field values to the canonical profile.',
  description:
    'All values are checked before anything is saved: 400 VALIDATION_ERROR names each ' +
    'offending field in `details.issues[].fieldKey`; an archived field or a stale ' +
    '`requirementVersion` is 404 (the schema changed). A cookie-authenticated call needs an ' +
    'allowlisted `Origin`.',
  tags,
  body: PutValuesBody,
  responses: {
    200: json('The global status after the save.', GlobalStatusWithVersionJson),
    ...userErrorResponses(400, 404),
  },
  handler: async ({ body, caller, services }) => {
    const { onboarding } = services.clients;
    const status = statusOf(
      (
        await onboarding.putValues({
          userId: caller.userId,
          platformKey: '',
          requirementVersion: body.requirementVersion,
          values: body.values as JsonObject,
        })
      ).status,
    );
    return {
      ...globalStatusJson(status),
      requirementVersion: status.requirementVersion,
    } satisfies z.infer<typeof GlobalStatusWithVersionJson>;
  },
});

const getMyOnboardingRequirements = defineOperation({
  auth: USER,
  response: { kind: 'json', status: 200 },
  operationId: 'getMyOnboardingRequirements',
  method: 'get',
  path: '/v1/onboarding/:platformKey/requirements',
  summary: 'The global fields, then the platform’s own fields, with current values.',
  description:
    'Active fields only. A platform PROFILE_FIELD that duplicates a global field is merged ' +
    'into the global entry (required when either is).',
  tags,
  params: PlatformParams,
  responses: {
    200: json('The requirements.', RequirementsJson),
    ...userErrorResponses(400, 404),
  },
  handler: async ({ params, caller, services }) => {
    const { onboarding } = services.clients;
    const platform = await userPlatform(
      services.clients.registry,
      params.platformKey,
      caller.environmentKey,
    );
    const answer = await onboarding.getRequirements({
      userId: caller.userId,
      platformKey: platform.platformKey,
    });
    return {
      platformKey: platform.platformKey,
      platformDisplayName: platform.displayName,
      requirementVersion: answer.requirementVersion,
      requirements: answer.requirements.map((requirement) =>
        requirementJson(requirement, platform.id),
      ),
    };
  },
});

const getMyOnboardingStatus = defineOperation({
  auth: USER,
  response: { kind: 'json', status: 200 },
  operationId: 'getMyOnboardingStatus',
  method: 'get',
  path: '/v1/onboarding/:platformKey/status',
  summary: 'The user’s calculated onboarding status for a platform.',
  tags,
  params: PlatformParams,
  responses: {
    200: json('The status.', PlatformStatusJson),
    ...userErrorResponses(400, 404),
  },
  handler: async ({ params, caller, services }) => {
    const { onboarding } = services.clients;
    const platform = await userPlatform(
      services.clients.registry,
      params.platformKey,
      caller.environmentKey,
    );
    const status = statusOf(
      (
        await onboarding.evaluateOnboarding({
          userId: caller.userId,
          platformKey: platform.platformKey,
        })
      ).status,
    );
    return platformStatusJson(platform.platformKey, status);
  },
});

const putMyOnboardingValues = defineOperation({
  auth: USER,
  response: { kind: 'json', status: 200 },
  operationId: 'putMyOnboardingValues',
  method: 'put',
  path: '/v1/onboarding/:platformKey/values',
  summary: 'Save values of the platform’s fields (and of the global fields it shows).',
  description:
    'PROFILE_FIELD values go to the canonical profile, CUSTOM_FIELD values to the ' +
    'platform. All values are checked before anything is saved: 400 VALIDATION_ERROR names ' +
    'each offending field in `details.issues[].fieldKey`; an archived field or a stale ' +
    '`requirementVersion` is 404 (the schema changed). The first save moves the status ' +
    'from NOT_STARTED to IN_PROGRESS. A cookie-authenticated call needs an allowlisted ' +
    '`Origin`.',
  tags,
  params: PlatformParams,
  body: PutValuesBody,
  responses: {
    200: json('The status after the save.', PlatformStatusJson),
    ...userErrorResponses(400, 404),
  },
  handler: async ({ params, body, caller, services }) => {
    const { onboarding } = services.clients;
    const platform = await userPlatform(
      services.clients.registry,
      params.platformKey,
      caller.environmentKey,
    );
    const status = statusOf(
      (
        await onboarding.putValues({
          userId: caller.userId,
          platformKey: platform.platformKey,
          requirementVersion: body.requirementVersion,
          values: body.values as JsonObject,
        })
      ).status,
    );
    return platformStatusJson(platform.platformKey, status);
  },
});

const completeMyOnboarding = defineOperation({
  auth: USER,
  response: { kind: 'json', status: 200 },
  operationId: 'completeMyOnboarding',
  method: 'post',
  path: '/v1/onboarding/:platformKey/complete',
  summary: 'Mark the platform’s onboarding COMPLETE.',
  description:
    'Succeeds only when no required field (global or platform) is missing; otherwise 409 ' +
    'CONFLICT with `details.missingFields`. A cookie-authenticated call needs an ' +
    'allowlisted `Origin`.',
  tags,
  params: PlatformParams,
  responses: {
    200: json('The status, COMPLETE.', PlatformStatusJson),
    ...userErrorResponses(400, 404, 409),
  },
  handler: async ({ params, caller, services }) => {
    const { onboarding } = services.clients;
    const platform = await userPlatform(
      services.clients.registry,
      params.platformKey,
      caller.environmentKey,
    );
    const status = statusOf(
      (
        await onboarding.completeOnboarding({
          userId: caller.userId,
          platformKey: platform.platformKey,
        })
      ).status,
    );
    return platformStatusJson(platform.platformKey, status);
  },
});

/** Spec 4.8 and 4.9: the signed-in user's session bootstrap and onboarding. */
export const onboardingUserOperations: readonly AnyOperation[] = [
  bootstrapCentralSession,
  getMyGlobalOnboardingRequirements,
  getMyGlobalOnboardingStatus,
  putMyGlobalOnboardingValues,
  getMyOnboardingRequirements,
  getMyOnboardingStatus,
  putMyOnboardingValues,
  completeMyOnboarding,
];
