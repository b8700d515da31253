import type { JsonObject } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import type { ProfileService } from '@gateway/contracts';
import type { Database } from '@gateway/db';
import { canonicalProfileKeys } from '@gateway/field-rules';
import { createAvatarUpload, readAvatar, storeAvatar } from './avatars.js';
import { evaluateWithProfile } from './onboarding-values.js';
import { patchProfile } from './profile-patch.js';
import { readProfile, type StoredProfile } from './profile-store.js';
import type { SchemaCache } from './schema-cache.js';

// Spec 2.5, 4.8: the signed-in user's own profile and avatar (ProfileService in
// proto/onboarding/v1/profile.proto).

/** A stored profile as its Profile message: empty values are left out of the map. */
export function profileMessage(profile: StoredProfile) {
  const values: Record<string, string> = {};
  for (const key of canonicalProfileKeys) {
    const value = profile.values[key];
    if (value !== null) values[key] = value;
  }
  return {
    userId: profile.userId,
    values,
    ...(profile.avatarUrl === null ? {} : { avatarUrl: profile.avatarUrl }),
    metadata: profile.metadata as JsonObject,
    ...(profile.updatedAt === null ? {} : { updatedAt: profile.updatedAt.toISOString() }),
  };
}

export function createProfileServiceImpl(
  db: Database,
  schemas: SchemaCache,
): ServiceImpl<typeof ProfileService> {
  const { knex } = db;
  return {
    async getProfile(request) {
      return { profile: profileMessage(await readProfile(knex, request.userId)) };
    },
    async patchProfile(request) {
      const profile = await patchProfile(knex, request.userId, request.patch ?? {});
      return { profile: profileMessage(profile) };
    },
    async getProfileDetails(request) {
      // One statement: the global evaluation reads the whole profile anyway.
      const { profile, status } = await evaluateWithProfile(knex, schemas, {
        userId: request.userId,
        platformKey: undefined,
      });
      return {
        profile: profileMessage(profile),
        filledKeys: canonicalProfileKeys.filter((key) => profile.values[key] !== null),
        emptyKeys: canonicalProfileKeys.filter((key) => profile.values[key] === null),
        globalStatus: status.globalStatus,
        globalMissingFields: status.globalMissingFields,
      };
    },
    async createAvatarUpload(request) {
      const upload = await createAvatarUpload(knex, request);
      return {
        uploadId: upload.uploadId,
        expiresAt: upload.expiresAt.toISOString(),
        maxBytes: upload.maxBytes,
      };
    },
    async storeAvatar(request) {
      const profile = await storeAvatar(knex, request);
      return { profile: profileMessage(profile) };
    },
    async getAvatar(request) {
      return readAvatar(knex, request.avatarId);
    },
  };
}
