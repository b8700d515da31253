import type { Database } from '@gateway/db';

/** Spec 2.5: only HTTPS pictures become avatars. */
function httpsUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return new URL(value).protocol === 'https:' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Spec 2.5 JIT: an HTTPS `picture` is copied into an empty avatarUrl, and `name` into
 * metadata.displayName when not yet set. Values the user chose are never overwritten.
 * One statement, so concurrent logins cannot lose either update.
 */
export async function applyIdentityClaims(
  db: Database,
  claims: { userId: string; picture: string | undefined; name: string | undefined },
): Promise<{ avatarUrl: string | undefined }> {
  const picture = httpsUrl(claims.picture) ?? null;
  const name =
    claims.name === undefined || claims.name.trim() === ''
      ? null
      : claims.name.trim().slice(0, 200);
  const now = new Date();
  const result = await db.knex.raw<{ rows: { avatar_url: string | null }[] }>(
    `insert into onboarding.profiles (user_id, avatar_url, metadata, created_at, updated_at)
     values (?, ?, case when ?::text is null then '{}'::jsonb else jsonb_build_object('displayName', ?::text) end, ?, ?)
     on conflict (user_id) do update set
       avatar_url = coalesce(onboarding.profiles.avatar_url, excluded.avatar_url),
       metadata = case
         when onboarding.profiles.metadata->>'displayName' is not null or ?::text is null
           then onboarding.profiles.metadata
         else onboarding.profiles.metadata || jsonb_build_object('displayName', ?::text)
       end,
       updated_at = excluded.updated_at
     returning avatar_url`,
    [claims.userId, picture, name, name, now, now, name, name],
  );
  const avatar = result.rows[0]?.avatar_url ?? null;
  return { avatarUrl: avatar ?? undefined };
}
