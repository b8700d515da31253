import type { Knex } from 'knex';
import { queryRows } from '@gateway/db';
import type { FieldValue } from '@gateway/field-rules';
import type { StoredGlobalDefinition } from './global-fields.js';
import type { Membership, MembershipStatus } from './memberships.js';
import type { StoredDefinition } from './platform-fields.js';
import {
  PROFILE_CLAIMS_CTES,
  profileClaimsBindings,
  type ProfileClaimValues,
} from './profile-claims.js';
import {
  PROFILE_SELECT_SQL,
  profileOf,
  type ProfileRow,
  type ProfileValues,
  type StoredProfile,
} from './profile-store.js';
import {
  globalSchemaOf,
  platformSchemaOf,
  type GlobalSchema,
  type PlatformSchema,
  type SchemaCache,
} from './schema-cache.js';
import { GLOBAL_SCHEMA, platformSchema } from './schema-versions.js';

// Everything an evaluation needs of one user and one scope, in one statement (one
// round trip, no transaction): the requirementVersions, the profile, the platform's custom
// values and membership, and — only when the schema cache holds no entry for a scope — that
// scope's active definitions. A cached schema whose version is not the one just read is
// stale (another process changed it): the statement runs again with every definition.
// A sign-in's identity claims (spec 2.5) ride on the first statement as a data-modifying
// WITH (profile-claims.ts): the claims and the read are still one round trip.

/** The schema a user is evaluated against: active fields only, in render order. */
export type ActiveSchema = {
  global: GlobalSchema;
  /** Undefined for the global scope. */
  platform: PlatformSchema | undefined;
};

/** The user's stored values: the canonical profile and the platform's custom values. */
export type UserValues = { profile: ProfileValues; custom: Map<string, FieldValue> };

export type OnboardingState = {
  schema: ActiveSchema;
  profile: StoredProfile;
  values: UserValues;
  /** Read only when asked for (platform scope); undefined when there is none. */
  membership: Membership | undefined;
};

export type StateRequest = {
  userId: string;
  /** Undefined: the global scope only. */
  platformKey: string | undefined;
  /** Also read the membership (platform scope only). */
  membership?: boolean;
  /**
   * A sign-in's identity claims, applied to the profile by the same statement (only
   * avatarUrl and metadata.displayName, which no requirement reads). The state read is the
   * profile as it was before them.
   */
  claims?: ProfileClaimValues;
};

type Shape = {
  /** Read the user's values (else the schema alone). */
  user: boolean;
  platform: boolean;
  membership: boolean;
  globalFields: boolean;
  platformFields: boolean;
  /** Apply the request's identity claims first (a user read only). */
  claims: boolean;
};

type GlobalFieldJson = {
  profileFieldKey: string;
  definition: StoredGlobalDefinition;
  createdAt: string;
};

type PlatformFieldJson = {
  id: string;
  fieldKey: string;
  definition: StoredDefinition;
  createdAt: string;
};

/** The profile's columns (PROFILE_SELECT_SQL; user_id null without a profile) and the rest. */
type StateRow = Record<string, unknown> & {
  user_id: string | null;
  avatar_url: string | null;
  metadata: Record<string, unknown> | null;
  created_at: Date | null;
  updated_at: Date | null;
  global_version: number;
  platform_version?: number;
  custom_values?: [string, FieldValue][];
  membership_status?: MembershipStatus | null;
  membership_completed_at?: Date | null;
  global_fields?: GlobalFieldJson[];
  platform_fields?: PlatformFieldJson[];
};

/** The profile columns of a row, when the user has a profile. */
function profileRowOf(row: StateRow): ProfileRow | undefined {
  const { user_id, metadata, created_at, updated_at } = row;
  if (user_id === null || metadata === null || created_at === null || updated_at === null) {
    return undefined;
  }
  return { ...row, user_id, metadata, created_at, updated_at };
}

type Binding = string | Date | null;

type Statement = { sql: string; bindings: (request: StateRequest) => readonly Binding[] };

/** The statement of each shape, built once. */
const statements = new Map<string, Statement>();

function statementOf(shape: Shape): Statement {
  const id = [
    shape.user,
    shape.platform,
    shape.membership,
    shape.globalFields,
    shape.platformFields,
    shape.claims,
  ]
    .map(Number)
    .join('');
  const known = statements.get(id);
  if (known !== undefined) return known;
  const columns: string[] = [];
  const binds: ((request: StateRequest) => string)[] = [];
  const key = (request: StateRequest) => request.platformKey ?? '';
  const version = (scope: (request: StateRequest) => string, as: string) => {
    columns.push(
      `coalesce((select version from onboarding.schema_versions where scope = ?), 0) as ${as}`,
    );
    binds.push(scope);
  };
  version(() => GLOBAL_SCHEMA, 'global_version');
  if (shape.platform) {
    version((request) => platformSchema(key(request)), 'platform_version');
  }
  if (shape.user && shape.platform) {
    columns.push(
      `(select coalesce(json_agg(json_build_array(c.field_definition_id, c.value)), '[]'::json)
        from onboarding.custom_values c where c.user_id = u.id and c.platform_key = ?) as custom_values`,
    );
    binds.push(key);
  }
  if (shape.globalFields) {
    columns.push(
      `(select coalesce(json_agg(json_build_object('profileFieldKey', g.profile_field_key,
          'definition', g.definition, 'createdAt', g.created_at)), '[]'::json)
        from onboarding.global_field_definitions g where g.active) as global_fields`,
    );
  }
  if (shape.platformFields) {
    columns.push(
      `(select coalesce(json_agg(json_build_object('id', f.id, 'fieldKey', f.field_key,
          'definition', f.definition, 'createdAt', f.created_at)), '[]'::json)
        from onboarding.field_definitions f where f.platform_key = ? and f.active) as platform_fields`,
    );
    binds.push(key);
  }
  if (shape.user && shape.membership) {
    columns.push('m.status as membership_status', 'm.completed_at as membership_completed_at');
  }
  if (shape.user) columns.push(PROFILE_SELECT_SQL);
  let sql = `select ${columns.join(',\n')}`;
  if (shape.user) {
    sql += `
    from (select cast(? as uuid) as id) u
    left join onboarding.profiles p on p.user_id = u.id`;
    binds.push((request) => request.userId);
  }
  if (shape.user && shape.membership) {
    sql += `\n    left join onboarding.memberships m on m.user_id = u.id and m.platform_key = ?`;
    binds.push(key);
  }
  const withClaims = shape.user && shape.claims;
  const statement: Statement = {
    sql: withClaims ? `with ${PROFILE_CLAIMS_CTES}\n${sql}` : sql,
    bindings: (request) => {
      const values: Binding[] = binds.map((bind) => bind(request));
      if (!withClaims) return values;
      if (request.claims === undefined) throw new Error('a claims statement without claims');
      return [...profileClaimsBindings(request.userId, request.claims, new Date()), ...values];
    },
  };
  statements.set(id, statement);
  return statement;
}

async function runStatement(knex: Knex, shape: Shape, request: StateRequest): Promise<StateRow> {
  const statement = statementOf(shape);
  // Straight through node-postgres outside a transaction (direct-statements.ts).
  const [row] = await queryRows<StateRow>(knex, statement.sql, statement.bindings(request));
  if (row === undefined) throw new Error('the onboarding state query returned no row');
  return row;
}

const globalSchemaFrom = (version: number, fields: readonly GlobalFieldJson[]): GlobalSchema =>
  globalSchemaOf(
    version,
    fields.map((field) => ({ ...field, createdAt: new Date(field.createdAt) })),
  );

const platformSchemaFrom = (
  version: number,
  fields: readonly PlatformFieldJson[],
): PlatformSchema =>
  platformSchemaOf(
    version,
    fields.map((field) => ({ ...field, createdAt: new Date(field.createdAt) })),
  );

/** The schema a row carries or confirms; undefined when the cached one is stale. */
function schemaFrom(
  row: StateRow,
  request: StateRequest,
  cache: SchemaCache,
  cached: { global: GlobalSchema | undefined; platform: PlatformSchema | undefined },
): { global: GlobalSchema | undefined; platform: PlatformSchema | undefined } {
  let global: GlobalSchema | undefined;
  if (row.global_fields !== undefined) {
    global = globalSchemaFrom(row.global_version, row.global_fields);
    cache.keepGlobal(global);
  } else if (cached.global?.version === row.global_version) {
    global = cached.global;
  }
  let platform: PlatformSchema | undefined;
  const platformKey = request.platformKey;
  if (platformKey !== undefined) {
    const version = row.platform_version ?? 0;
    if (row.platform_fields !== undefined) {
      platform = platformSchemaFrom(version, row.platform_fields);
      cache.keepPlatform(platformKey, platform);
    } else if (cached.platform?.version === version) {
      platform = cached.platform;
    }
  }
  return { global, platform };
}

type Read = { row: StateRow; schema: ActiveSchema };

/**
 * Runs the statement of `shape`, with the definitions of every scope the cache holds no
 * entry for; once more with every definition when a cached scope turns out stale.
 */
async function readWithSchema(
  knex: Knex,
  cache: SchemaCache,
  request: StateRequest,
  shape: Omit<Shape, 'globalFields' | 'platformFields' | 'claims'>,
): Promise<Read> {
  const cached = {
    global: cache.global(),
    platform: request.platformKey === undefined ? undefined : cache.platform(request.platformKey),
  };
  const first: Shape = {
    ...shape,
    globalFields: cached.global === undefined,
    platformFields: shape.platform && cached.platform === undefined,
    claims: shape.user && request.claims !== undefined,
  };
  let row = await runStatement(knex, first, request);
  let schema = schemaFrom(row, request, cache, cached);
  if (schema.global === undefined || (shape.platform && schema.platform === undefined)) {
    // The claims were applied by the first statement.
    row = await runStatement(
      knex,
      { ...shape, globalFields: true, platformFields: shape.platform, claims: false },
      request,
    );
    schema = schemaFrom(row, request, cache, cached);
  }
  const { global, platform } = schema;
  if (global === undefined || (shape.platform && platform === undefined)) {
    throw new Error('the onboarding state query returned no schema');
  }
  return { row, schema: { global, platform } };
}

/**
 * The active schema of the global scope and, when given, of one platform. No statement at
 * all when the cache holds both at `versions` (read and held by the caller's transaction);
 * otherwise one (two when a cached scope turns out stale).
 */
export async function readSchema(
  knex: Knex,
  cache: SchemaCache,
  platformKey: string | undefined,
  versions?: { global: number; platform: number | undefined },
): Promise<ActiveSchema> {
  if (versions !== undefined) {
    const global = cache.global();
    const platform = platformKey === undefined ? undefined : cache.platform(platformKey);
    if (
      global?.version === versions.global &&
      (platformKey === undefined || platform?.version === versions.platform)
    ) {
      return { global, platform };
    }
  }
  const shape = { user: false, platform: platformKey !== undefined, membership: false };
  return (await readWithSchema(knex, cache, { userId: '', platformKey }, shape)).schema;
}

/**
 * One user's onboarding state for the global scope or one platform: one statement when the
 * cached schema is current (or absent), two when another process changed it since.
 */
export async function readOnboardingState(
  knex: Knex,
  cache: SchemaCache,
  request: StateRequest,
): Promise<OnboardingState> {
  const platformScope = request.platformKey !== undefined;
  const { row, schema } = await readWithSchema(knex, cache, request, {
    user: true,
    platform: platformScope,
    membership: platformScope && request.membership === true,
  });
  const profile = profileOf(request.userId, profileRowOf(row));
  const status = row.membership_status ?? undefined;
  const completedAt = row.membership_completed_at ?? null;
  return {
    schema,
    profile,
    values: { profile: profile.values, custom: new Map(row.custom_values ?? []) },
    membership:
      status === undefined
        ? undefined
        : { status, completedAt: completedAt === null ? null : new Date(completedAt) },
  };
}
