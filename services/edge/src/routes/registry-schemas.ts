import { z } from 'zod';
import { AUDIT_RECORD_KINDS } from '@gateway/contracts';
import { displayNameText, metadataSchema, storedText } from '@gateway/field-rules';

// Request and response schemas of the registry admin API (spec 2.1-2.4, 4.10, 4.11). The
// same schemas validate requests and describe them in /openapi.json. Request bodies are
// strict: an unknown property, including the removed `callbackUrl` and `allowedReturnUrls`
// of a platform (spec 2.1, 9), is 400 VALIDATION_ERROR before any service is called. Text
// that is stored is storedText (no U+0000, no unpaired surrogate), names shown to people are
// displayNameText, and metadata is bounded by metadataSchema (@gateway/field-rules).

export const PLATFORM_KEY_PATTERN = /^[A-Z][A-Z0-9_]{1,63}$/;
export const ENVIRONMENT_KEY_PATTERN = /^[A-Z][A-Z0-9_]{1,31}$/;
export const OIDC_CLIENT_ID_PATTERN = /^[0-9A-Za-z@._~-]{1,128}$/;

const ONBOARDING_MODES = ['none', 'platform', 'central'] as const;
const TIERS = ['development', 'staging', 'production'] as const;
const CREDENTIAL_KINDS = ['bff', 'backend'] as const;

const timestamp = z.iso.datetime({ offset: true });
/** Metadata as answered; what a request may carry is `metadataInput`. */
const metadata = z.record(z.string(), z.unknown());
const metadataInput = metadataSchema();
const httpUrl = z.url({ protocol: /^https?$/ }).max(2048);
/** Existence is the service's check: an unknown key is IDENTITY_ENVIRONMENT_NOT_FOUND. */
const environmentKeyReference = storedText().min(1).max(64);

// ---- Path parameters ----

export const PlatformKeyParams = z
  .object({ platformKey: z.string().regex(PLATFORM_KEY_PATTERN) })
  .strict();
export const CredentialParams = z
  .object({ platformKey: z.string().regex(PLATFORM_KEY_PATTERN), credentialId: z.uuid() })
  .strict();
export const EnvironmentKeyParams = z
  .object({ environmentKey: z.string().regex(ENVIRONMENT_KEY_PATTERN) })
  .strict();

// ---- Query parameters ----

export const ListPlatformsQuery = z
  .object({
    identityEnvironmentKey: environmentKeyReference.optional(),
    archived: z
      .enum(['true', 'false'])
      .optional()
      .describe('`true` lists archived platforms only.'),
  })
  .strict();

const auditRecordKind = z.enum(AUDIT_RECORD_KINDS);

export const ListAuditRecordsQuery = z
  .object({
    kind: auditRecordKind.optional(),
    targetKey: storedText().min(1).max(100).optional(),
    actor: storedText()
      .min(1)
      .max(320)
      .optional()
      .describe(
        "Who acted, as the record stores it: the actor's subject (a user id, or a part of " +
          'the gateway such as `edge`), e-mail (any case) or client id.',
      ),
    platform: z
      .string()
      .regex(PLATFORM_KEY_PATTERN)
      .optional()
      .describe('Records about this platform (its key): its changes, keys and sign-ins.'),
    from: timestamp.optional().describe('Records created at or after this ISO 8601 instant.'),
    to: timestamp.optional().describe('Records created at or before this ISO 8601 instant.'),
    page: z.coerce.number().int().min(1).max(1_000_000).default(1),
    pageSize: z.coerce.number().int().min(1).max(100).default(25),
  })
  .strict()
  .refine((query) => !(query.from && query.to && Date.parse(query.from) > Date.parse(query.to)), {
    path: ['to'],
    message: 'must not be before `from`',
  });

// ---- Request bodies ----

export const RedirectPairInputSchema = z
  .object({
    id: z.uuid().optional().describe('Updates this pair in place (PATCH).'),
    label: displayNameText(200),
    returnUrl: httpUrl,
    callbackUrl: httpUrl,
    isDefault: z.boolean(),
  })
  .strict()
  .meta({ id: 'RedirectPairInput' });

const platformFields = {
  displayName: displayNameText(200),
  identityEnvironmentKey: environmentKeyReference,
  redirectPairs: z.array(RedirectPairInputSchema).min(1).max(50),
  defaultOnboardingMode: z.enum(ONBOARDING_MODES),
  centralOnboardingEnabled: z.boolean(),
  platformOnboardingPath: storedText().min(1).max(2048),
  metadata: metadataInput,
  adminConsole: z
    .boolean()
    .describe(
      "Sessions created by this platform's logins may act as admin credentials (a " +
        "platform_admin's gateway token then carries its permissions). Default false.",
    ),
};

export const CreatePlatformBody = z
  .object({
    platformKey: z.string().regex(PLATFORM_KEY_PATTERN),
    displayName: platformFields.displayName,
    identityEnvironmentKey: platformFields.identityEnvironmentKey.optional(),
    redirectPairs: platformFields.redirectPairs,
    defaultOnboardingMode: platformFields.defaultOnboardingMode.optional(),
    centralOnboardingEnabled: platformFields.centralOnboardingEnabled.optional(),
    platformOnboardingPath: platformFields.platformOnboardingPath.optional(),
    metadata: metadataInput.optional(),
    adminConsole: platformFields.adminConsole.optional(),
  })
  .strict()
  .meta({ id: 'CreatePlatformRequest' });

const atLeastOneField = (body: Record<string, unknown>) => Object.keys(body).length > 0;

export const UpdatePlatformBody = z
  .object({
    displayName: platformFields.displayName.optional(),
    identityEnvironmentKey: platformFields.identityEnvironmentKey.optional(),
    redirectPairs: platformFields.redirectPairs
      .optional()
      .describe(
        'Replaces the pairs: updated in place by id, otherwise matched by returnUrl; ' +
          'omitted pairs and their keys are deleted.',
      ),
    defaultOnboardingMode: platformFields.defaultOnboardingMode.optional(),
    centralOnboardingEnabled: platformFields.centralOnboardingEnabled.optional(),
    platformOnboardingPath: platformFields.platformOnboardingPath
      .nullable()
      .optional()
      .describe('null removes it.'),
    metadata: metadataInput.optional(),
    adminConsole: platformFields.adminConsole.optional(),
  })
  .strict()
  .refine(atLeastOneField, { message: 'At least one field is required.' })
  .meta({ id: 'UpdatePlatformRequest' });

export const CreateCredentialBody = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('bff'), redirectPairId: z.uuid() }).strict(),
    z.object({ kind: z.literal('backend') }).strict(),
  ])
  .meta({ id: 'CreateCredentialRequest' });

export const RotateCredentialBody = z
  .object({
    revokePreviousImmediately: z.boolean().optional(),
    rotateClientId: z.boolean().optional(),
  })
  .strict()
  .optional()
  .meta({ id: 'RotateCredentialRequest' });

const environmentFields = {
  displayName: displayNameText(200),
  tier: z.enum(TIERS),
  issuer: storedText()
    .min(1)
    .max(2048)
    .describe('HTTPS (HTTP only for localhost) without query, fragment or credentials.'),
  oidcClientId: z.string().regex(OIDC_CLIENT_ID_PATTERN),
  oidcClientSecret: storedText().min(1).max(1000).describe('Write-only.'),
  postLogoutRedirectUri: httpUrl,
  metadata: metadataInput,
};

export const CreateEnvironmentBody = z
  .object({
    environmentKey: z.string().regex(ENVIRONMENT_KEY_PATTERN),
    displayName: environmentFields.displayName,
    tier: environmentFields.tier,
    issuer: environmentFields.issuer,
    oidcClientId: environmentFields.oidcClientId,
    oidcClientSecret: environmentFields.oidcClientSecret.optional(),
    postLogoutRedirectUri: environmentFields.postLogoutRedirectUri.optional(),
    metadata: metadataInput.optional(),
  })
  .strict()
  .meta({ id: 'CreateIdentityEnvironmentRequest' });

export const UpdateEnvironmentBody = z
  .object({
    displayName: environmentFields.displayName.optional(),
    tier: environmentFields.tier.optional(),
    issuer: environmentFields.issuer.optional(),
    oidcClientId: environmentFields.oidcClientId.optional(),
    oidcClientSecret: environmentFields.oidcClientSecret
      .nullable()
      .optional()
      .describe('A string replaces the secret, null removes it. Write-only.'),
    postLogoutRedirectUri: environmentFields.postLogoutRedirectUri
      .nullable()
      .optional()
      .describe('null removes it.'),
    metadata: metadataInput.optional(),
  })
  .strict()
  .refine(atLeastOneField, { message: 'At least one field is required.' })
  .meta({ id: 'UpdateIdentityEnvironmentRequest' });

// ---- Responses ----

export const RedirectPairJson = z
  .object({
    id: z.string(),
    label: z.string(),
    returnUrl: z.string(),
    callbackUrl: z.string(),
    isDefault: z.boolean(),
  })
  .meta({ id: 'RedirectPair' });

export const CredentialJson = z
  .object({
    id: z.string(),
    kind: z.enum(CREDENTIAL_KINDS),
    redirectPairId: z.string().nullable(),
    clientId: z.string(),
    createdAt: timestamp,
    rotatedAt: timestamp.nullable(),
    lastUsedAt: timestamp.nullable(),
    previousSecretExpiresAt: timestamp.nullable(),
  })
  .meta({ id: 'Credential', description: 'A platform key. Its secret is never included.' });

export const IssuedCredentialJson = z
  .object({
    id: z.string(),
    kind: z.enum(CREDENTIAL_KINDS),
    redirectPairId: z.string().nullable(),
    clientId: z.string(),
    clientSecret: z.string().describe('Shown once, in this response only.'),
  })
  .meta({ id: 'IssuedCredential' });

export const PlatformJson = z
  .object({
    id: z.string(),
    platformKey: z.string(),
    displayName: z.string(),
    active: z.boolean(),
    status: z.enum(['active', 'inactive', 'archived']),
    requirementVersion: z.number().int(),
    centralOnboardingEnabled: z.boolean(),
    adminConsole: platformFields.adminConsole,
    platformOnboardingPath: z.string().nullable(),
    defaultOnboardingMode: z.enum(ONBOARDING_MODES),
    credentialsConfigured: z.boolean(),
    credentials: z.array(CredentialJson),
    redirectPairs: z.array(RedirectPairJson),
    identityEnvironment: z.object({
      key: z.string(),
      displayName: z.string(),
      tier: z.enum(TIERS),
      active: z.boolean(),
    }),
    metadata,
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Platform' });

export const PlatformListJson = z
  .object({ items: z.array(PlatformJson) })
  .meta({ id: 'PlatformList' });

export const CredentialResponseJson = z
  .object({ platform: PlatformJson, credentials: z.array(IssuedCredentialJson) })
  .meta({
    id: 'CredentialResponse',
    description: 'A platform with the keys just issued, each secret shown once.',
  });

export const IdentityEnvironmentJson = z
  .object({
    id: z.string(),
    environmentKey: z.string(),
    displayName: z.string(),
    tier: z.enum(TIERS),
    source: z.enum(['deployment', 'database']),
    active: z.boolean(),
    issuer: z.string(),
    oidcClientId: z.string(),
    oidcClientSecretConfigured: z.boolean(),
    postLogoutRedirectUri: z.string().nullable(),
    backchannelLogoutUrl: z
      .string()
      .optional()
      .describe(
        "An addition to spec 2.4: the gateway's OpenID Connect Back-Channel Logout endpoint " +
          'for this environment, `{base_url}/v1/auth/backchannel-logout/{environmentKey}`. ' +
          "Register it as the gateway client's `backchannel_logout_uri` at the identity " +
          'provider (with `backchannel_logout_session_required`).',
      ),
    grantsGatewayPermissions: z.boolean(),
    metadata,
    platformCount: z.number().int(),
    activePlatformCount: z.number().int(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'IdentityEnvironment' });

export const IdentityEnvironmentDetailJson = IdentityEnvironmentJson.extend({
  platforms: z.array(
    z.object({ platformKey: z.string(), displayName: z.string(), active: z.boolean() }),
  ),
}).meta({ id: 'IdentityEnvironmentDetail', description: 'An environment with its platforms.' });

export const IdentityEnvironmentListJson = z
  .object({ items: z.array(IdentityEnvironmentJson) })
  .meta({ id: 'IdentityEnvironmentList' });

export const ValidationReportJson = z
  .object({
    environmentKey: z.string(),
    ok: z.boolean(),
    checks: z.array(
      z.object({
        name: z.enum(['discovery', 'endpoints', 'jwks', 'client', 'secret']),
        status: z.enum(['pass', 'fail', 'skip']),
        message: z.string(),
      }),
    ),
  })
  .meta({ id: 'ValidationReport' });

export const AuditRecordJson = z
  .object({
    id: z.string(),
    kind: z.string().describe(`One of: ${AUDIT_RECORD_KINDS.join(', ')}.`),
    actor: z.object({
      kind: z.enum(['machine', 'user', 'system']),
      subject: z.string().nullable(),
      clientId: z.string().nullable(),
      environmentKey: z.string().nullable(),
      email: z.string().nullable(),
    }),
    targetType: z.string(),
    targetId: z.string(),
    targetKey: z.string(),
    details: metadata,
    requestId: z.string().nullable(),
    createdAt: timestamp,
  })
  .meta({ id: 'AuditRecord' });

export const AuditRecordListJson = z
  .object({
    items: z.array(AuditRecordJson),
    total: z.number().int(),
    page: z.number().int(),
    pageSize: z.number().int(),
  })
  .meta({ id: 'AuditRecordList' });
