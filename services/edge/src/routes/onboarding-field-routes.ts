import { z } from 'zod';
import type { JsonObject } from '@bufbuild/protobuf';
import type { Client } from '@connectrpc/connect';
import type { PlatformField, RegistryService } from '@gateway/contracts';
import { fieldDefinitionPatchSchema, fieldDefinitionSchema } from '@gateway/field-rules';
import { defineOperation, type AnyOperation } from '../http/operation.js';
import { adminErrorResponses, json } from './openapi-responses.js';
import { PLATFORM_KEY_PATTERN } from './registry-schemas.js';

// Spec 4.13 platform fields: the onboarding schema of one platform. The definitions are
// validated here and again by the onboarding service, with the same @gateway/field-rules
// schemas; the onboarding service moves the platform's requirementVersion up by one and its
// COMPLETE memberships to IN_PROGRESS in the same transaction as each change (spec 3.6).

const FieldParams = z
  .object({
    platformKey: z.string().regex(PLATFORM_KEY_PATTERN),
    fieldKey: z.string().min(1).max(64),
  })
  .strict();
const FieldsParams = z.object({ platformKey: z.string().regex(PLATFORM_KEY_PATTERN) }).strict();

/**
 * The descriptive properties and timestamps both field kinds answer with (a platform field
 * here, a global field in global-field-routes.ts); each schema adds only its own keys.
 */
export const fieldDescriptiveJson = {
  label: z.string(),
  fieldType: z.string(),
  description: z.string().nullable(),
  placeholder: z.string().nullable(),
  sortOrder: z.number().int(),
  required: z.boolean(),
  options: z.array(z.object({ value: z.string(), label: z.string() })),
  validation: z.record(z.string(), z.unknown()),
  uiConfig: z.record(z.string(), z.unknown()),
  createdAt: z.iso.datetime({ offset: true }),
  updatedAt: z.iso.datetime({ offset: true }),
};

export const OnboardingFieldJson = z
  .object({
    id: z.uuid(),
    platformKey: z.string(),
    fieldKey: z.string(),
    active: z.boolean().describe('False when ARCHIVED.'),
    source: z.string(),
    profileFieldKey: z.string().nullable(),
    ...fieldDescriptiveJson,
  })
  .meta({ id: 'OnboardingField' });

export const OnboardingFieldListJson = z
  .object({ items: z.array(OnboardingFieldJson) })
  .meta({ id: 'OnboardingFieldList' });

export function toOnboardingFieldJson(field: PlatformField | undefined): JsonObject {
  if (field === undefined) throw new Error('onboarding answered no field');
  return {
    id: field.id,
    platformKey: field.platformKey,
    fieldKey: field.fieldKey,
    active: field.active,
    ...field.definition,
    createdAt: field.createdAt,
    updatedAt: field.updatedAt,
  };
}

const SCHEMA_READ = { kind: 'platform-schema', access: 'read' } as const;
const SCHEMA_WRITE = { kind: 'platform-schema', access: 'write' } as const;
const tags = ['Onboarding schema'];
const collection = '/v1/platforms/:platformKey/onboarding/fields';
const item = `${collection}/:fieldKey`;

type Registry = Pick<Client<typeof RegistryService>, 'getPlatform'>;

/** Unknown platform: 404 before anything is stored. */
function requirePlatform(registry: Registry, platformKey: string) {
  return registry.getPlatform({ platformKey });
}

const listOnboardingFields = defineOperation({
  auth: SCHEMA_READ,
  response: { kind: 'json', status: 200 },
  operationId: 'listOnboardingFields',
  method: 'get',
  path: collection,
  summary: "List a platform's onboarding fields, archived included.",
  description: 'Ordered by `sortOrder`, then creation time.',
  tags,
  params: FieldsParams,
  responses: {
    200: json('The fields.', OnboardingFieldListJson),
    ...adminErrorResponses(404),
  },
  handler: async ({ params, services }) => {
    const { onboarding } = services.clients;
    await requirePlatform(services.clients.registry, params.platformKey);
    const answer = await onboarding.listPlatformFields({ platformKey: params.platformKey });
    return { items: answer.fields.map(toOnboardingFieldJson) };
  },
});

const createOnboardingField = defineOperation({
  auth: SCHEMA_WRITE,
  response: { kind: 'json', status: 201 },
  operationId: 'createOnboardingField',
  method: 'post',
  path: collection,
  summary: 'Create an onboarding field of a platform.',
  description: 'A duplicate `fieldKey` is 409 CONFLICT. Increments `requirementVersion`.',
  tags,
  params: FieldsParams,
  body: fieldDefinitionSchema,
  responses: {
    201: json('The created field.', OnboardingFieldJson),
    ...adminErrorResponses(404, 409),
  },
  handler: async ({ params, body, services }) => {
    const { onboarding } = services.clients;
    await requirePlatform(services.clients.registry, params.platformKey);
    const answer = await onboarding.createPlatformField({
      platformKey: params.platformKey,
      definition: body as JsonObject,
    });
    return toOnboardingFieldJson(answer.field);
  },
});

const getOnboardingField = defineOperation({
  auth: SCHEMA_READ,
  response: { kind: 'json', status: 200 },
  operationId: 'getOnboardingField',
  method: 'get',
  path: item,
  summary: 'Read an onboarding field of a platform.',
  tags,
  params: FieldParams,
  responses: { 200: json('The field.', OnboardingFieldJson), ...adminErrorResponses(404) },
  handler: async ({ params, services }) => {
    const { onboarding } = services.clients;
    const answer = await onboarding.getPlatformField(params);
    return toOnboardingFieldJson(answer.field);
  },
});

const updateOnboardingField = defineOperation({
  auth: SCHEMA_WRITE,
  response: { kind: 'json', status: 200 },
  operationId: 'updateOnboardingField',
  method: 'patch',
  path: item,
  summary: 'Change an onboarding field of a platform; `active: true` restores it.',
  description:
    '`fieldKey` is immutable. `options`, `validation` and `uiConfig` replace the stored ' +
    'value. Increments `requirementVersion` when the field changes.',
  tags,
  params: FieldParams,
  body: fieldDefinitionPatchSchema,
  responses: { 200: json('The field.', OnboardingFieldJson), ...adminErrorResponses(404) },
  handler: async ({ params, body, services }) => {
    const { onboarding } = services.clients;
    await requirePlatform(services.clients.registry, params.platformKey);
    const answer = await onboarding.updatePlatformField({
      ...params,
      patch: body as JsonObject,
    });
    return toOnboardingFieldJson(answer.field);
  },
});

const archiveOnboardingField = defineOperation({
  auth: SCHEMA_WRITE,
  response: { kind: 'json', status: 200 },
  operationId: 'archiveOnboardingField',
  method: 'delete',
  path: item,
  summary: 'Archive an onboarding field of a platform (values are kept).',
  description: 'Sets `active` false. Increments `requirementVersion` when it was active.',
  tags,
  params: FieldParams,
  responses: {
    200: json('The archived field.', OnboardingFieldJson),
    ...adminErrorResponses(404),
  },
  handler: async ({ params, services }) => {
    const { onboarding } = services.clients;
    await requirePlatform(services.clients.registry, params.platformKey);
    const answer = await onboarding.archivePlatformField(params);
    return toOnboardingFieldJson(answer.field);
  },
});

/** Spec 4.13: every operation on a platform's onboarding schema. */
export const onboardingFieldOperations: readonly AnyOperation[] = [
  listOnboardingFields,
  createOnboardingField,
  getOnboardingField,
  updateOnboardingField,
  archiveOnboardingField,
];
