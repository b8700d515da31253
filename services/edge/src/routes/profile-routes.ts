import { z } from 'zod';
import type { JsonObject } from '@bufbuild/protobuf';
import type { LocalUser, Profile } from '@gateway/contracts';
import {
  canonicalProfileKeys,
  metadataSchema,
  storedText,
  type CanonicalProfileKey,
} from '@gateway/field-rules';
import { defineOperation, type AnyOperation } from '../http/operation.js';
import { ErrorBodySchema } from '../http/operation-catalog.js';
import { AccountJson, toAccountJson } from './account-routes.js';
import { json, userErrorResponses } from './openapi-responses.js';

// Spec 2.5 and 4.8: the signed-in user's details, profile and avatar. The shapes the spec
// leaves open ("not shown") are ours (docs/decisions.md); the rules of a profile change live
// in the onboarding service (services/onboarding/src/profile-patch.ts, avatars.ts).

const AVATAR_CONTENT_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
const AVATAR_MAX_BYTES = 1024 * 1024;

const keyDescriptions: Partial<Record<CanonicalProfileKey, string>> = {
  firstName: 'Up to 200 characters.',
  middleName: 'Up to 200 characters.',
  lastName: 'Up to 200 characters.',
  nickname: 'Up to 200 characters.',
  gender: 'Up to 100 characters, or an option of its global field.',
  phoneNumber: 'E.164: `+` then 7 to 15 digits.',
  dateOfBirth: '`YYYY-MM-DD`.',
  bio: 'Up to 2000 characters.',
  nationalityCountryCode: 'ISO 3166-1 alpha-2, upper case.',
  secondaryNationalityCountryCode: 'ISO 3166-1 alpha-2, upper case.',
  residenceCountryCode: 'ISO 3166-1 alpha-2, upper case.',
  preferredLocale: 'A BCP 47 language tag (`pt-BR`).',
  timezone: 'An IANA time zone name (`Europe/Paris`).',
};

/** One entry per canonical key (a zod shape, or the values of a profile). */
function byKey<T>(entry: (key: CanonicalProfileKey) => T): Record<CanonicalProfileKey, T> {
  return Object.fromEntries(canonicalProfileKeys.map((key) => [key, entry(key)])) as Record<
    CanonicalProfileKey,
    T
  >;
}

const describedKey = <T extends z.ZodType>(key: CanonicalProfileKey, schema: T): T => {
  const description = keyDescriptions[key];
  return description === undefined ? schema : schema.describe(description);
};

export const ProfileJson = z
  .object({
    userId: z.uuid(),
    ...byKey((key) => describedKey(key, z.string().nullable())),
    avatarUrl: z
      .string()
      .nullable()
      .describe(
        'An uploaded image (`{base_url}/v1/avatars/{avatarId}`) or the identity provider’s ' +
          'HTTPS picture.',
      ),
    metadata: z
      .record(z.string(), z.unknown())
      .describe('Free JSON members (at most 4 KiB); `displayName` is plain text.'),
    updatedAt: z.iso
      .datetime({ offset: true })
      .nullable()
      .describe('Null until the profile is first written.'),
  })
  .meta({
    id: 'Profile',
    description:
      'The canonical profile, shared by every platform. Every canonical key is ' +
      'present, null when empty.',
  });

type ProfileJsonValue = z.infer<typeof ProfileJson>;

function toProfileJson(profile: Profile | undefined): ProfileJsonValue {
  if (profile === undefined) throw new Error('onboarding answered no profile');
  return {
    userId: profile.userId,
    ...byKey((key) => profile.values[key] ?? null),
    avatarUrl: profile.avatarUrl ?? null,
    metadata: profile.metadata ?? {},
    updatedAt: profile.updatedAt ?? null,
  };
}

const PROFILE_PATCH_KEYS = new Set<string>([...canonicalProfileKeys, 'metadata', 'avatarUrl']);

/**
 * PATCH body: any subset of the canonical keys, `metadata` and `avatarUrl`. Unknown keys are
 * reported each by name (path = the key), together with the other issues.
 */
const ProfilePatchBody = z
  .looseObject({
    ...byKey((key) =>
      storedText()
        .nullable()
        .optional()
        .describe(`${keyDescriptions[key] ?? ''} Null or "" clears the value.`.trim()),
    ),
    metadata: metadataSchema()
      .nullable()
      .optional()
      .describe(
        'Merged into the stored metadata at the top level: each member replaces the stored ' +
          'one and a null member removes it; `metadata: null` removes every member. ' +
          '`displayName` is plain text of at most 200 characters; the merged object is at ' +
          'most 4 KiB as JSON.',
      ),
    avatarUrl: z
      .null()
      .optional()
      .describe(
        'Only null: removes the avatar (and the stored image). Upload a new one through ' +
          '`POST /v1/profile/me/avatar/upload-request`.',
      ),
  })
  .check(
    z.superRefine(
      (body: Record<string, unknown>, ctx) => {
        for (const key of Object.keys(body)) {
          if (!PROFILE_PATCH_KEYS.has(key)) {
            ctx.addIssue({ code: 'custom', path: [key], message: 'is not a profile field' });
          }
        }
      },
      { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
    ),
  )
  .meta({ id: 'ProfilePatch', additionalProperties: false });

const LocalUserJson = z
  .object({
    id: z.uuid(),
    environmentKey: z.string(),
    deploymentEnvironment: z
      .boolean()
      .describe('A user of the deployment environment (only these can hold roles).'),
    status: z.enum(['ACTIVE', 'SOFT_DELETED', 'SUSPENDED']),
    roles: z.array(z.string()).describe('`["platform_admin"]` or `[]`.'),
    createdAt: z.iso.datetime({ offset: true }),
    lastLoginAt: z.iso.datetime({ offset: true }).nullable(),
  })
  .meta({ id: 'LocalUser', description: 'The local user record behind the account.' });

function toLocalUserJson(user: LocalUser | undefined): z.infer<typeof LocalUserJson> {
  if (user === undefined) throw new Error('auth-flow answered no local user');
  return {
    id: user.id,
    environmentKey: user.environmentKey,
    deploymentEnvironment: user.deploymentEnvironment,
    status: user.status as z.infer<typeof LocalUserJson>['status'],
    roles: user.roles,
    createdAt: user.createdAt,
    lastLoginAt: user.lastLoginAt ?? null,
  };
}

const UserDetailsJson = z
  .object({ identity: AccountJson, localUser: LocalUserJson, profile: ProfileJson })
  .meta({ id: 'UserDetails' });

const ProfileDetailsJson = z
  .object({
    profile: ProfileJson,
    completeness: z
      .object({
        filled: z.array(z.string()).describe('Canonical keys with a value, in canonical order.'),
        empty: z.array(z.string()).describe('Canonical keys without one.'),
      })
      .describe('Which canonical profile keys are filled.'),
    globalOnboarding: z
      .object({
        status: z.enum(['COMPLETE', 'INCOMPLETE']),
        missingFields: z
          .array(z.string())
          .describe('Required active global fields without a valid value.'),
      })
      .describe('The global profile status, as the global onboarding reports it.'),
  })
  .meta({ id: 'ProfileDetails' });

const AvatarUploadRequestBody = z
  .object({
    contentType: z.enum(AVATAR_CONTENT_TYPES),
    contentLength: z
      .number()
      .int()
      .min(1)
      .max(AVATAR_MAX_BYTES)
      .describe('The exact size of the image in bytes.'),
  })
  .strict()
  .meta({ id: 'AvatarUploadRequest' });

const AvatarUploadJson = z
  .object({
    uploadId: z.uuid(),
    uploadUrl: z.url().describe('`{base_url}/v1/profile/me/avatar/uploads/{uploadId}`.'),
    method: z.literal('PUT'),
    headers: z
      .object({ 'content-type': z.enum(AVATAR_CONTENT_TYPES) })
      .describe('Headers to send with the image (besides the credentials).'),
    expiresAt: z.iso.datetime({ offset: true }).describe('10 minutes after the request.'),
    maxBytes: z.number().int().describe('The largest image the gateway accepts (1 MiB).'),
  })
  .meta({ id: 'AvatarUpload' });

const UploadParams = z.object({ uploadId: storedText().max(100) }).strict();
const AvatarParams = z.object({ avatarId: storedText().max(100) }).strict();

const binary = { type: 'string', format: 'binary' } as const;
const imageContent = Object.fromEntries(
  AVATAR_CONTENT_TYPES.map((type) => [type, { schema: binary }]),
);

function errorResponse(description: string) {
  return { description, content: { 'application/json': { schema: ErrorBodySchema } } };
}

const USER = { kind: 'user' } as const;
const tags = ['Profile'];

const getMyUserDetails = defineOperation({
  auth: USER,
  response: { kind: 'json', status: 200 },
  operationId: 'getMyUserDetails',
  method: 'get',
  path: '/v1/users/me',
  summary: 'The signed-in user: account, local record and profile.',
  description:
    '`identity` is the account view of `GET /v1/account/me` (local, no identity service ' +
    'call); `localUser` the local record (environment, status, roles, timestamps); ' +
    '`profile` the canonical profile of `GET /v1/profile/me`.',
  tags,
  responses: { 200: json('The user.', UserDetailsJson), ...userErrorResponses() },
  handler: async ({ caller, services }) => {
    const { authFlow, profile } = services.clients;
    const { userId } = caller;
    const [account, answer] = await Promise.all([
      authFlow.getAccount({ userId }),
      profile.getProfile({ userId }),
    ]);
    return {
      identity: toAccountJson(account.account),
      localUser: toLocalUserJson(account.localUser),
      profile: toProfileJson(answer.profile),
    };
  },
});

const getMyProfile = defineOperation({
  auth: USER,
  response: { kind: 'json', status: 200 },
  operationId: 'getMyProfile',
  method: 'get',
  path: '/v1/profile/me',
  summary: 'The signed-in user’s canonical profile.',
  description:
    'Every canonical key is present (null when empty); `updatedAt` is null until the profile is first written.',
  tags,
  responses: { 200: json('The profile.', ProfileJson), ...userErrorResponses() },
  handler: async ({ caller, services }) => {
    const { profile } = services.clients;
    const answer = await profile.getProfile({ userId: caller.userId });
    return toProfileJson(answer.profile);
  },
});

const patchMyProfile = defineOperation({
  auth: USER,
  response: { kind: 'json', status: 200 },
  operationId: 'patchMyProfile',
  method: 'patch',
  path: '/v1/profile/me',
  summary: 'Change the signed-in user’s profile.',
  description:
    'Any subset of the canonical keys (a string, or null to clear), `metadata` and ' +
    '`avatarUrl` (null only). Each value must pass its key’s own rule (the natural type of ' +
    'the key: DATE for dateOfBirth, PHONE, COUNTRY, free text with a length limit) and, ' +
    'when an active global field definition exists for the key, that definition’s type, ' +
    'options and validation. Invalid values and unknown keys: 400 `VALIDATION_ERROR` with ' +
    '`details.issues[]` of `{ location: "body", path: <key>, message }`; nothing is saved ' +
    'unless every value is valid. A cookie-authenticated call needs an allowlisted `Origin`.',
  tags,
  body: ProfilePatchBody,
  responses: { 200: json('The changed profile.', ProfileJson), ...userErrorResponses(400) },
  handler: async ({ body, caller, services }) => {
    const { profile } = services.clients;
    const answer = await profile.patchProfile({
      userId: caller.userId,
      patch: body as JsonObject,
    });
    return toProfileJson(answer.profile);
  },
});

const getMyLocalProfileDetails = defineOperation({
  auth: USER,
  response: { kind: 'json', status: 200 },
  operationId: 'getMyLocalProfileDetails',
  method: 'get',
  path: '/v1/profile/me/details',
  summary: 'The profile with its completeness and global onboarding status.',
  description:
    '`completeness` lists the canonical keys that are filled and empty; `globalOnboarding` ' +
    'is the global profile status with the required global fields still missing.',
  tags,
  responses: { 200: json('The profile details.', ProfileDetailsJson), ...userErrorResponses() },
  handler: async ({ caller, services }) => {
    const { profile } = services.clients;
    const answer = await profile.getProfileDetails({ userId: caller.userId });
    return {
      profile: toProfileJson(answer.profile),
      completeness: { filled: answer.filledKeys, empty: answer.emptyKeys },
      globalOnboarding: {
        status: answer.globalStatus as 'COMPLETE' | 'INCOMPLETE',
        missingFields: answer.globalMissingFields,
      },
    };
  },
});

const createAvatarUploadRequest = defineOperation({
  auth: USER,
  response: { kind: 'json', status: 201 },
  operationId: 'createAvatarUploadRequest',
  method: 'post',
  path: '/v1/profile/me/avatar/upload-request',
  summary: 'Reserve an avatar upload.',
  description:
    'The gateway is the upload target: send the image with `PUT` to `uploadUrl` with the ' +
    'given headers and the same credentials, once, within 10 minutes. The body must be ' +
    'exactly `contentLength` bytes of the declared type (checked by its magic bytes). A ' +
    'cookie-authenticated call needs an allowlisted `Origin`.',
  tags,
  body: AvatarUploadRequestBody,
  responses: {
    201: json('The upload is reserved.', AvatarUploadJson),
    ...userErrorResponses(400),
  },
  handler: async ({ body, caller, services }) => {
    const { profile } = services.clients;
    const answer = await profile.createAvatarUpload({
      userId: caller.userId,
      contentType: body.contentType,
      contentLength: body.contentLength,
    });
    return {
      uploadId: answer.uploadId,
      uploadUrl: `${services.baseUrl}/v1/profile/me/avatar/uploads/${answer.uploadId}`,
      method: 'PUT',
      headers: { 'content-type': body.contentType },
      expiresAt: answer.expiresAt,
      maxBytes: answer.maxBytes,
    };
  },
});

const uploadMyAvatar = defineOperation({
  auth: USER,
  response: { kind: 'json', status: 200 },
  operationId: 'uploadMyAvatar',
  method: 'put',
  path: '/v1/profile/me/avatar/uploads/:uploadId',
  summary: 'Upload the avatar image of a reserved upload.',
  description:
    'The raw image, of the type and size declared in the upload request. Stores it, sets ' +
    'the profile’s `avatarUrl` to its public `GET /v1/avatars/{avatarId}` and deletes the ' +
    'previous stored image. An unknown, expired, used or other user’s upload: 404. A ' +
    'Content-Type, magic bytes or size other than declared: 400 (413 when larger); such a ' +
    'refusal leaves the upload usable. A cookie-authenticated call needs an allowlisted ' +
    '`Origin`.',
  tags,
  params: UploadParams,
  rawBody: {
    mediaTypes: AVATAR_CONTENT_TYPES,
    limitBytes: AVATAR_MAX_BYTES,
    openApi: { required: true, content: imageContent },
  },
  responses: {
    200: json('The profile with its new avatarUrl.', ProfileJson),
    ...userErrorResponses(400, 404),
    413: errorResponse('The image is larger than declared or than 1 MiB (PAYLOAD_TOO_LARGE).'),
    415: errorResponse(
      'The body is not image/png, image/jpeg or image/webp (UNSUPPORTED_MEDIA_TYPE).',
    ),
  },
  handler: async ({ params, raw, caller, services }) => {
    if (raw === undefined) throw new Error('uploadMyAvatar declares a raw body');
    const answer = await services.clients.profile.storeAvatar({
      userId: caller.userId,
      uploadId: params.uploadId,
      contentType: raw.mediaType,
      data: raw.data,
      avatarUrlPrefix: `${services.baseUrl}/v1/avatars/`,
    });
    return toProfileJson(answer.profile);
  },
});

const getAvatar = defineOperation({
  auth: { kind: 'public' },
  response: { kind: 'immutable-image' },
  operationId: 'getAvatar',
  method: 'get',
  path: '/v1/avatars/:avatarId',
  summary: 'An avatar image stored by the gateway (public).',
  description:
    'Served with the type sniffed from its magic bytes when stored, `X-Content-Type-Options: ' +
    "nosniff`, `Content-Security-Policy: default-src 'none'` and a year of immutable " +
    'caching (a new image gets a new id).',
  tags,
  params: AvatarParams,
  responses: {
    200: { description: 'The image.', content: imageContent },
    404: errorResponse('No such avatar (NOT_FOUND).'),
    503: errorResponse('A gateway service is unavailable.'),
  },
  handler: async ({ params, services }) => {
    const avatar = await services.clients.profile.getAvatar({ avatarId: params.avatarId });
    return { contentType: avatar.contentType, data: avatar.data };
  },
});

/** Spec 2.5 and 4.8: the signed-in user's details, profile and avatar. */
export const profileOperations: readonly AnyOperation[] = [
  getMyUserDetails,
  getMyProfile,
  patchMyProfile,
  getMyLocalProfileDetails,
  createAvatarUploadRequest,
  uploadMyAvatar,
  getAvatar,
];
