import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { GatewayError } from '@gateway/errors';
import { readProfile, writeProfile, type StoredProfile } from './profile-store.js';

// Spec 4.8 POST /v1/profile/me/avatar/upload-request (body and response "not shown"; the
// shape is ours, docs/decisions.md). There is no object store: the gateway is the upload
// target and keeps the image in PostgreSQL.
//
// 1. An upload is reserved for one user, one content type and one size, for 10 minutes.
// 2. The image is PUT once to its upload URL by the same user. An unknown, expired, used or
//    other user's upload is 404 (nothing tells them apart). A body whose Content-Type or
//    magic bytes differ from the declared type, or whose size differs from the declared
//    size, is refused (400, or 413 when larger) without using up the upload.
// 3. Stored: the profile's avatarUrl points at the public `GET /v1/avatars/{avatarId}`, and
//    the user's previous stored image is deleted. Each stored image has a new id, so its URL
//    may be cached forever.

export const AVATAR_CONTENT_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
export type AvatarContentType = (typeof AVATAR_CONTENT_TYPES)[number];
/** Largest avatar image: 1 MiB. */
export const AVATAR_MAX_BYTES = 1024 * 1024;
/** How long an upload URL can be used. */
export const AVATAR_UPLOAD_TTL_MS = 10 * 60_000;

const uploads = 'onboarding.avatar_uploads';
const avatars = 'onboarding.avatars';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isAvatarContentType(value: string): value is AvatarContentType {
  return (AVATAR_CONTENT_TYPES as readonly string[]).includes(value);
}

const startsWith = (data: Uint8Array, bytes: readonly number[], offset = 0): boolean =>
  data.length >= offset + bytes.length && bytes.every((byte, i) => data[offset + i] === byte);

/** The image type of `data` by its magic bytes; undefined for anything else. */
export function sniffImageType(data: Uint8Array): AvatarContentType | undefined {
  if (startsWith(data, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(data, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  // RIFF <size> WEBP
  if (startsWith(data, [0x52, 0x49, 0x46, 0x46]) && startsWith(data, [0x57, 0x45, 0x42, 0x50], 8))
    return 'image/webp';
  return undefined;
}

const invalid = (path: string, message: string, location = 'body'): GatewayError =>
  new GatewayError(
    'VALIDATION_ERROR',
    `Invalid avatar ${location === 'body' ? 'request' : location}.`,
    {
      details: { issues: [{ location, path, message }] },
    },
  );

const uploadNotFound = (): GatewayError =>
  new GatewayError('NOT_FOUND', 'No such avatar upload: it may have expired or been used.');

export type AvatarUpload = { uploadId: string; expiresAt: Date; maxBytes: number };

/** Step 1: reserves an upload. Clears the user's expired and used uploads on the way. */
export async function createAvatarUpload(
  knex: Knex,
  request: { userId: string; contentType: string; contentLength: number },
  now = new Date(),
): Promise<AvatarUpload> {
  if (!isAvatarContentType(request.contentType)) {
    throw invalid('contentType', `must be one of ${AVATAR_CONTENT_TYPES.join(', ')}`);
  }
  const length = request.contentLength;
  if (!Number.isInteger(length) || length < 1 || length > AVATAR_MAX_BYTES) {
    throw invalid('contentLength', `must be an integer from 1 to ${AVATAR_MAX_BYTES}`);
  }
  const expiresAt = new Date(now.getTime() + AVATAR_UPLOAD_TTL_MS);
  const uploadId = randomUUID();
  await knex.transaction(async (trx) => {
    await trx(uploads)
      .where({ user_id: request.userId })
      .andWhere((q) => void q.whereNotNull('used_at').orWhere('expires_at', '<=', now))
      .delete();
    await trx(uploads).insert({
      id: uploadId,
      user_id: request.userId,
      content_type: request.contentType,
      content_length: length,
      expires_at: expiresAt,
      used_at: null,
      created_at: now,
    });
  });
  return { uploadId, expiresAt, maxBytes: AVATAR_MAX_BYTES };
}

type UploadRow = {
  id: string;
  user_id: string;
  content_type: AvatarContentType;
  content_length: number;
  expires_at: Date;
  used_at: Date | null;
};

/** Steps 2 and 3, in one transaction: the upload row is locked, checked and used up. */
export async function storeAvatar(
  knex: Knex,
  request: {
    userId: string;
    uploadId: string;
    contentType: string;
    data: Uint8Array;
    avatarUrlPrefix: string;
  },
  now = new Date(),
): Promise<StoredProfile> {
  if (!UUID.test(request.uploadId)) throw uploadNotFound();
  if (request.avatarUrlPrefix === '') throw new Error('storeAvatar needs the avatar URL prefix');
  return knex.transaction(async (trx) => {
    const upload = (await trx(uploads)
      .where({ id: request.uploadId, user_id: request.userId })
      .forUpdate()
      .first()) as UploadRow | undefined;
    if (
      upload === undefined ||
      upload.used_at !== null ||
      new Date(upload.expires_at).getTime() <= now.getTime()
    ) {
      throw uploadNotFound();
    }
    if (request.contentType !== upload.content_type) {
      throw invalid(
        'content-type',
        `must be ${upload.content_type}, the type declared in the upload request`,
        'header',
      );
    }
    const size = request.data.length;
    if (size > upload.content_length) {
      throw new GatewayError(
        'PAYLOAD_TOO_LARGE',
        `The image is larger than the declared ${upload.content_length} bytes.`,
      );
    }
    if (size < upload.content_length) {
      throw invalid('body', `must be the declared ${upload.content_length} bytes`);
    }
    if (sniffImageType(request.data) !== upload.content_type) {
      throw invalid('body', `must be a ${upload.content_type} image`);
    }
    await trx(uploads).where({ id: upload.id }).update({ used_at: now });
    const avatarId = randomUUID();
    await trx(avatars).insert({
      id: avatarId,
      user_id: request.userId,
      content_type: upload.content_type,
      data: Buffer.from(request.data.buffer, request.data.byteOffset, request.data.byteLength),
      size,
      created_at: now,
    });
    await writeProfile(trx, request.userId, {
      avatarUrl: `${request.avatarUrlPrefix}${avatarId}`,
    });
    await deleteUserAvatars(trx, request.userId, avatarId);
    return readProfile(trx, request.userId);
  });
}

/** Deletes the user's stored images (all but `keep`). */
export async function deleteUserAvatars(knex: Knex, userId: string, keep?: string): Promise<void> {
  const query = knex(avatars).where({ user_id: userId });
  if (keep !== undefined) void query.whereNot({ id: keep });
  await query.delete();
}

/** A stored image, for the public avatar URL; NOT_FOUND otherwise. */
export async function readAvatar(
  knex: Knex,
  avatarId: string,
): Promise<{ contentType: AvatarContentType; data: Uint8Array }> {
  const notFound = () => new GatewayError('NOT_FOUND', 'No such avatar.');
  if (!UUID.test(avatarId)) throw notFound();
  const row = (await knex(avatars).where({ id: avatarId }).first('content_type', 'data')) as
    { content_type: AvatarContentType; data: Uint8Array } | undefined;
  if (row === undefined) throw notFound();
  return { contentType: row.content_type, data: row.data };
}
