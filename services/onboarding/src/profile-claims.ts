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

/** The claims of a sign-in as the profile takes them (null: nothing to fill). */
export type ProfileClaimValues = { picture: string | null; name: string | null };

/** Spec 2.5: an HTTPS picture, and the name trimmed (at most 200 characters). */
export function profileClaimValues(claims: {
  picture?: string | undefined;
  name?: string | undefined;
}): ProfileClaimValues {
  return {
    picture: httpsUrl(claims.picture) ?? null,
    name:
      claims.name === undefined || claims.name.trim() === ''
        ? null
        : claims.name.trim().slice(0, 200),
  };
}

/**
 * Spec 2.5 JIT: an HTTPS `picture` is copied into an empty avatarUrl, and `name` into
 * metadata.displayName when not yet set. Values the user chose are never overwritten.
 *
 * Common table expressions `claims`, `existing` and `written`: they read the
 * profile and write only when the profile does not exist yet or a claim fills something still
 * empty, so a returning user's login writes nothing. The write itself merges in place, so
 * concurrent logins cannot lose either update. PostgreSQL runs a data-modifying WITH whether
 * or not the statement reads it, so a larger statement can apply the claims by starting with
 * `with ${PROFILE_CLAIMS_CTES}` and binding `profileClaimsBindings` first; it then reads the
 * profile as it was before the claims (only avatar_url and metadata can differ).
 */
export const PROFILE_CLAIMS_CTES = `claims as (
       select cast(? as uuid) as user_id, cast(? as text) as picture, cast(? as text) as name
     ), existing as (
       select p.avatar_url, p.metadata->>'displayName' as display_name
       from onboarding.profiles p, claims where p.user_id = claims.user_id
     ), written as (
       insert into onboarding.profiles (user_id, avatar_url, metadata, created_at, updated_at)
       select claims.user_id, claims.picture,
         case when claims.name is null then '{}'::jsonb
           else jsonb_build_object('displayName', claims.name) end, ?, ?
       from claims
       where not exists (select 1 from existing)
         or exists (select 1 from existing
           where (existing.avatar_url is null and claims.picture is not null)
             or (existing.display_name is null and claims.name is not null))
       on conflict (user_id) do update set
         avatar_url = coalesce(onboarding.profiles.avatar_url, excluded.avatar_url),
         metadata = case
           when onboarding.profiles.metadata->>'displayName' is not null
             or excluded.metadata->>'displayName' is null
             then onboarding.profiles.metadata
           else onboarding.profiles.metadata
             || jsonb_build_object('displayName', excluded.metadata->>'displayName')
         end,
         updated_at = excluded.updated_at
       returning avatar_url
     )`;

/** The bindings of PROFILE_CLAIMS_CTES, in order. */
export function profileClaimsBindings(
  userId: string,
  claims: ProfileClaimValues,
  now: Date,
): (string | Date | null)[] {
  return [userId, claims.picture, claims.name, now, now];
}

const APPLY_IDENTITY_CLAIMS = `with ${PROFILE_CLAIMS_CTES}
     select true as written, avatar_url from written
     union all
     select false, avatar_url from existing`;

/** Applies the claims of a sign-in (PROFILE_CLAIMS_CTES) in one statement. */
export async function applyIdentityClaims(
  db: Database,
  claims: { userId: string; picture: string | undefined; name: string | undefined },
): Promise<{ avatarUrl: string | undefined }> {
  const result = await db.knex.raw<{
    rows: { written: boolean; avatar_url: string | null }[];
  }>(
    APPLY_IDENTITY_CLAIMS,
    profileClaimsBindings(claims.userId, profileClaimValues(claims), new Date()),
  );
  const row = result.rows.find((candidate) => candidate.written) ?? result.rows[0];
  return { avatarUrl: row?.avatar_url ?? undefined };
}
