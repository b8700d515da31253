import { z } from 'zod';
import type { JsonObject } from '@bufbuild/protobuf';
import type { GlobalField } from '@gateway/contracts';
import {
  canonicalProfileKeySchema,
  globalFieldDefinitionPatchSchema,
  globalFieldDefinitionSchema,
} from '@gateway/field-rules';
import { defineOperation, type AnyOperation } from '../http/operation.js';
import { fieldDescriptiveJson } from './onboarding-field-routes.js';
import { adminErrorResponses, json } from './openapi-responses.js';

// Spec 2.10 (global fields), 4.13: the global onboarding fields, keyed by canonical profile
// key and collected from every user in every mode. `platforms:admin` and the schema scope
// are both needed; the onboarding service moves the global requirement version up in the
// same transaction as each change. Saved profile values stay when a field is archived.

const GlobalFieldParams = z.object({ profileFieldKey: canonicalProfileKeySchema }).strict();

export const GlobalOnboardingFieldJson = z
  .object({
    profileFieldKey: z.string(),
    fieldKey: z.string().describe('Equal to `profileFieldKey`; the key in `missingFields`.'),
    active: z.boolean().describe('False when ARCHIVED.'),
    source: z.literal('PROFILE_FIELD'),
    ...fieldDescriptiveJson,
  })
  .meta({ id: 'GlobalOnboardingField' });

const GlobalOnboardingFieldListJson = z
  .object({ items: z.array(GlobalOnboardingFieldJson) })
  .meta({ id: 'GlobalOnboardingFieldList' });

function toGlobalFieldJson(field: GlobalField | undefined): JsonObject {
  if (field === undefined) throw new Error('onboarding answered no field');
  return {
    ...field.definition,
    profileFieldKey: field.profileFieldKey,
    fieldKey: field.profileFieldKey,
    active: field.active,
    createdAt: field.createdAt,
    updatedAt: field.updatedAt,
  };
}

const GLOBAL_SCHEMA_READ = { kind: 'global-schema', access: 'read' } as const;
const GLOBAL_SCHEMA_WRITE = { kind: 'global-schema', access: 'write' } as const;
const tags = ['Onboarding schema'];
const collection = '/v1/admin/onboarding/global-fields';
const item = `${collection}/:profileFieldKey`;
const effect =
  'From the next login, every user with a missing required global field is stopped at ' +
  'the onboarding page, in every mode; existing sessions continue.';

const listGlobalOnboardingFields = defineOperation({
  auth: GLOBAL_SCHEMA_READ,
  response: { kind: 'json', status: 200 },
  operationId: 'listGlobalOnboardingFields',
  method: 'get',
  path: collection,
  summary: 'List the global onboarding fields, archived included.',
  description:
    'Ordered by `sortOrder`, then creation time. Needs `platforms:admin` and `onboarding:schema:read`.',
  tags,
  responses: {
    200: json('The fields.', GlobalOnboardingFieldListJson),
    ...adminErrorResponses(),
  },
  handler: async ({ services }) => {
    const { onboarding } = services.clients;
    const answer = await onboarding.listGlobalFields({});
    return { items: answer.fields.map(toGlobalFieldJson) };
  },
});

const createGlobalOnboardingField = defineOperation({
  auth: GLOBAL_SCHEMA_WRITE,
  response: { kind: 'json', status: 201 },
  operationId: 'createGlobalOnboardingField',
  method: 'post',
  path: collection,
  summary: 'Create a global onboarding field for a canonical profile key.',
  description:
    'Body: `profileFieldKey` (a canonical profile key) and the descriptive properties of a ' +
    'platform field; `source` is implied (PROFILE_FIELD) and the type must be one the ' +
    `profile field can hold. A second field for the same key is 409 CONFLICT. ${effect}`,
  tags,
  body: globalFieldDefinitionSchema,
  responses: {
    201: json('The created field.', GlobalOnboardingFieldJson),
    ...adminErrorResponses(409),
  },
  handler: async ({ body, services }) => {
    const { onboarding } = services.clients;
    // The parsed body carries the implied fieldKey, which the create body may not.
    const definition = (({ fieldKey: _implied, ...rest }: typeof body) => rest)(body);
    const answer = await onboarding.createGlobalField({
      definition: definition as JsonObject,
    });
    return toGlobalFieldJson(answer.field);
  },
});

const getGlobalOnboardingField = defineOperation({
  auth: GLOBAL_SCHEMA_READ,
  response: { kind: 'json', status: 200 },
  operationId: 'getGlobalOnboardingField',
  method: 'get',
  path: item,
  summary: 'Read a global onboarding field.',
  tags,
  params: GlobalFieldParams,
  responses: {
    200: json('The field.', GlobalOnboardingFieldJson),
    ...adminErrorResponses(404),
  },
  handler: async ({ params, services }) => {
    const { onboarding } = services.clients;
    const answer = await onboarding.getGlobalField(params);
    return toGlobalFieldJson(answer.field);
  },
});

const updateGlobalOnboardingField = defineOperation({
  auth: GLOBAL_SCHEMA_WRITE,
  response: { kind: 'json', status: 200 },
  operationId: 'updateGlobalOnboardingField',
  method: 'patch',
  path: item,
  summary: 'Change a global onboarding field; `active: true` restores it.',
  description: '`profileFieldKey` and `source` are immutable.',
  tags,
  params: GlobalFieldParams,
  body: globalFieldDefinitionPatchSchema,
  responses: {
    200: json('The field.', GlobalOnboardingFieldJson),
    ...adminErrorResponses(404),
  },
  handler: async ({ params, body, services }) => {
    const { onboarding } = services.clients;
    const answer = await onboarding.updateGlobalField({
      ...params,
      patch: body as JsonObject,
    });
    return toGlobalFieldJson(answer.field);
  },
});

const archiveGlobalOnboardingField = defineOperation({
  auth: GLOBAL_SCHEMA_WRITE,
  response: { kind: 'json', status: 200 },
  operationId: 'archiveGlobalOnboardingField',
  method: 'delete',
  path: item,
  summary: 'Archive a global onboarding field (saved profile values are kept).',
  tags,
  params: GlobalFieldParams,
  responses: {
    200: json('The archived field.', GlobalOnboardingFieldJson),
    ...adminErrorResponses(404),
  },
  handler: async ({ params, services }) => {
    const { onboarding } = services.clients;
    const answer = await onboarding.archiveGlobalField(params);
    return toGlobalFieldJson(answer.field);
  },
});

/** Spec 4.13: every operation on the global onboarding fields. */
export const globalFieldOperations: readonly AnyOperation[] = [
  listGlobalOnboardingFields,
  createGlobalOnboardingField,
  getGlobalOnboardingField,
  updateGlobalOnboardingField,
  archiveGlobalOnboardingField,
];
