import type { JsonObject } from '@bufbuild/protobuf';
import type {
  AuditRecord,
  Credential,
  IdentityEnvironment,
  IssuedCredential,
  Platform,
  RedirectPair,
  ValidateIdentityEnvironmentResponse,
} from '@gateway/contracts';
import type { z } from 'zod';
import type {
  AuditRecordJson,
  CredentialJson,
  CredentialResponseJson,
  IdentityEnvironmentDetailJson,
  IdentityEnvironmentJson,
  IssuedCredentialJson,
  PlatformJson,
  RedirectPairJson,
  ValidationReportJson,
} from './registry-schemas.js';
import { backchannelLogoutPath } from './backchannel-logout-routes.js';

// Protobuf messages of the registry to the JSON of spec 2.1-2.4, written out field by field
// (not protobuf's toJson) so that the public shape is the spec's: camelCase, `null` where the
// spec says "or null", `{}` for absent metadata, and never a field the spec does not list.
// Enum-like values cross Connect as the spec's strings and are passed on as they are.

type Json<S extends z.ZodType> = z.output<S>;

type PlatformBody = Json<typeof PlatformJson>;
type EnvironmentBody = Json<typeof IdentityEnvironmentJson>;

const orNull = (value: string | undefined): string | null => value ?? null;
/** Actor fields cross Connect as plain strings; empty means "not known". */
const emptyToNull = (value: string): string | null => (value === '' ? null : value);
const objectOf = (value: JsonObject | undefined): Record<string, unknown> => value ?? {};

export function toRedirectPairJson(pair: RedirectPair): Json<typeof RedirectPairJson> {
  return {
    id: pair.id,
    label: pair.label,
    returnUrl: pair.returnUrl,
    callbackUrl: pair.callbackUrl,
    isDefault: pair.isDefault,
  };
}

export function toCredentialJson(credential: Credential): Json<typeof CredentialJson> {
  return {
    id: credential.id,
    kind: credential.kind as Json<typeof CredentialJson>['kind'],
    redirectPairId: orNull(credential.redirectPairId),
    clientId: credential.clientId,
    createdAt: credential.createdAt,
    rotatedAt: orNull(credential.rotatedAt),
    lastUsedAt: orNull(credential.lastUsedAt),
    previousSecretExpiresAt: orNull(credential.previousSecretExpiresAt),
  };
}

/** Spec 2.3: the secret is returned once, on create, issue and rotate responses only. */
export function toIssuedCredentialJson(
  credential: IssuedCredential,
): Json<typeof IssuedCredentialJson> {
  return {
    id: credential.id,
    kind: credential.kind as Json<typeof IssuedCredentialJson>['kind'],
    redirectPairId: orNull(credential.redirectPairId),
    clientId: credential.clientId,
    clientSecret: credential.clientSecret,
  };
}

/**
 * A platform as the API shows it. `requirementVersion` is owned by the onboarding service
 * (spec 9): the caller reads it there (see withRequirementVersions).
 */
export function toPlatformJson(
  platform: Platform | undefined,
  requirementVersion: number,
): PlatformBody {
  if (platform === undefined) throw new Error('The registry answered without a platform');
  const environment = platform.identityEnvironment;
  return {
    id: platform.id,
    platformKey: platform.platformKey,
    displayName: platform.displayName,
    active: platform.active,
    status: platform.status as PlatformBody['status'],
    requirementVersion,
    centralOnboardingEnabled: platform.centralOnboardingEnabled,
    adminConsole: platform.adminConsole,
    platformOnboardingPath: orNull(platform.platformOnboardingPath),
    defaultOnboardingMode: platform.defaultOnboardingMode as PlatformBody['defaultOnboardingMode'],
    credentialsConfigured: platform.credentialsConfigured,
    credentials: platform.credentials.map(toCredentialJson),
    redirectPairs: platform.redirectPairs.map(toRedirectPairJson),
    identityEnvironment: {
      key: environment?.key ?? '',
      displayName: environment?.displayName ?? '',
      tier: (environment?.tier ?? '') as PlatformBody['identityEnvironment']['tier'],
      active: environment?.active ?? false,
    },
    metadata: objectOf(platform.metadata),
    createdAt: platform.createdAt,
    updatedAt: platform.updatedAt,
  };
}

/** Spec 4.10: `{ platform, credentials }`, the credentials with their secrets, once. */
export function toCredentialResponseJson(
  answer: {
    platform?: Platform | undefined;
    credentials: IssuedCredential[];
  },
  requirementVersion: number,
): Json<typeof CredentialResponseJson> {
  return {
    platform: toPlatformJson(answer.platform, requirementVersion),
    credentials: answer.credentials.map(toIssuedCredentialJson),
  };
}

/** Spec 2.4, with `backchannelLogoutUrl` (an additional field, spec 9) below `baseUrl`. */
export function toIdentityEnvironmentJson(
  environment: IdentityEnvironment | undefined,
  baseUrl: string,
): EnvironmentBody {
  if (environment === undefined) throw new Error('The registry answered without an environment');
  return {
    id: environment.id,
    environmentKey: environment.environmentKey,
    displayName: environment.displayName,
    tier: environment.tier as EnvironmentBody['tier'],
    source: environment.source as EnvironmentBody['source'],
    active: environment.active,
    issuer: environment.issuer,
    oidcClientId: environment.oidcClientId,
    oidcClientSecretConfigured: environment.oidcClientSecretConfigured,
    postLogoutRedirectUri: orNull(environment.postLogoutRedirectUri),
    backchannelLogoutUrl: `${baseUrl}${backchannelLogoutPath(environment.environmentKey)}`,
    grantsGatewayPermissions: environment.grantsGatewayPermissions,
    metadata: objectOf(environment.metadata),
    platformCount: environment.platformCount,
    activePlatformCount: environment.activePlatformCount,
    createdAt: environment.createdAt,
    updatedAt: environment.updatedAt,
  };
}

/** Spec 2.4: the single-item GET adds the environment's platforms. */
export function toIdentityEnvironmentDetailJson(
  environment: IdentityEnvironment | undefined,
  baseUrl: string,
): Json<typeof IdentityEnvironmentDetailJson> {
  return {
    ...toIdentityEnvironmentJson(environment, baseUrl),
    platforms: (environment?.platforms ?? []).map((platform) => ({
      platformKey: platform.platformKey,
      displayName: platform.displayName,
      active: platform.active,
    })),
  };
}

export function toValidationReportJson(
  report: ValidateIdentityEnvironmentResponse,
): Json<typeof ValidationReportJson> {
  type Check = Json<typeof ValidationReportJson>['checks'][number];
  return {
    environmentKey: report.environmentKey,
    ok: report.ok,
    checks: report.checks.map((check) => ({
      name: check.name as Check['name'],
      status: check.status as Check['status'],
      message: check.message,
    })),
  };
}

export function toAuditRecordJson(record: AuditRecord): Json<typeof AuditRecordJson> {
  type Actor = Json<typeof AuditRecordJson>['actor'];
  return {
    id: record.id,
    kind: record.kind,
    actor: {
      kind: (record.actor?.kind ?? 'system') as Actor['kind'],
      subject: emptyToNull(record.actor?.subject ?? ''),
      clientId: emptyToNull(record.actor?.clientId ?? ''),
      environmentKey: emptyToNull(record.actor?.environmentKey ?? ''),
      email: emptyToNull(record.actor?.email ?? ''),
    },
    targetType: record.targetType,
    targetId: record.targetId,
    targetKey: record.targetKey,
    details: objectOf(record.details),
    requestId: emptyToNull(record.requestId),
    createdAt: record.createdAt,
  };
}
