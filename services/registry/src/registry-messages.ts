import type { MessageInitShape } from '@bufbuild/protobuf';
import type {
  AuditRecordSchema,
  IdentityEnvironmentSchema,
  IssuedCredentialSchema,
  PlatformSchema,
  RequestContext,
} from '@gateway/contracts';
import type { AuditRecordRow } from './audit-log.js';
import type { IssuedCredential } from './credentials.js';
import type { ChangeContext, EnvironmentView } from './identity-environments.js';
import type { PlatformView } from './platforms.js';

// Conversions between the registry's rows and its Connect messages.

const iso = (date: Date) => date.toISOString();
const optionalIso = (date: Date | null) => (date === null ? undefined : date.toISOString());

export function changeContextOf(context: RequestContext | undefined): ChangeContext {
  const actor = context?.actor;
  const kind = actor?.kind === 'machine' || actor?.kind === 'user' ? actor.kind : 'system';
  return {
    actor: {
      kind,
      subject: actor?.subject ?? '',
      clientId: actor?.clientId ?? '',
      environmentKey: actor?.environmentKey ?? '',
      email: actor?.email ?? '',
    },
    requestId: context?.requestId ?? '',
  };
}

/**
 * `deploymentSecretConfigured`: the deployment row's secret lives in configuration
 * (IDENTITY_OIDC_CLIENT_SECRET), never in the table.
 */
export function environmentMessage(
  view: EnvironmentView,
  deploymentSecretConfigured: boolean,
): MessageInitShape<typeof IdentityEnvironmentSchema> {
  return {
    id: view.id,
    environmentKey: view.environment_key,
    displayName: view.display_name,
    tier: view.tier,
    source: view.source,
    active: view.active,
    issuer: view.issuer,
    oidcClientId: view.oidc_client_id,
    oidcClientSecretConfigured:
      view.source === 'deployment'
        ? deploymentSecretConfigured
        : view.oidc_client_secret_encrypted !== null,
    ...(view.post_logout_redirect_uri === null
      ? {}
      : { postLogoutRedirectUri: view.post_logout_redirect_uri }),
    grantsGatewayPermissions: view.source === 'deployment',
    metadata: view.metadata,
    platformCount: view.platform_count,
    activePlatformCount: view.active_platform_count,
    createdAt: iso(view.created_at),
    updatedAt: iso(view.updated_at),
    platforms: (view.platforms ?? []).map((platform) => ({
      platformKey: platform.platform_key,
      displayName: platform.display_name,
      active: platform.active,
    })),
  };
}

export function platformMessage(view: PlatformView): MessageInitShape<typeof PlatformSchema> {
  const { platform } = view;
  return {
    id: platform.id,
    platformKey: platform.platform_key,
    displayName: platform.display_name,
    active: platform.status === 'active',
    status: platform.status,
    centralOnboardingEnabled: platform.central_onboarding_enabled,
    adminConsole: platform.admin_console,
    ...(platform.platform_onboarding_path === null
      ? {}
      : { platformOnboardingPath: platform.platform_onboarding_path }),
    defaultOnboardingMode: platform.default_onboarding_mode,
    credentialsConfigured: view.credentialsConfigured,
    credentials: view.credentials.map((credential) => ({
      id: credential.id,
      kind: credential.kind,
      ...(credential.redirect_pair_id === null
        ? {}
        : { redirectPairId: credential.redirect_pair_id }),
      clientId: credential.client_id,
      createdAt: iso(credential.created_at),
      rotatedAt: optionalIso(credential.rotated_at),
      lastUsedAt: optionalIso(credential.last_used_at),
      previousSecretExpiresAt: optionalIso(credential.previous_secret_expires_at),
    })),
    redirectPairs: view.pairs.map((pair) => ({
      id: pair.id,
      label: pair.label,
      returnUrl: pair.return_url,
      callbackUrl: pair.callback_url,
      isDefault: pair.is_default,
    })),
    identityEnvironment: {
      key: view.environment.environment_key,
      displayName: view.environment.display_name,
      tier: view.environment.tier,
      active: view.environment.active,
    },
    metadata: platform.metadata,
    createdAt: iso(platform.created_at),
    updatedAt: iso(platform.updated_at),
  };
}

export function issuedCredentialMessage(
  credential: IssuedCredential,
): MessageInitShape<typeof IssuedCredentialSchema> {
  return {
    id: credential.id,
    kind: credential.kind,
    ...(credential.redirectPairId === null ? {} : { redirectPairId: credential.redirectPairId }),
    clientId: credential.clientId,
    clientSecret: credential.clientSecret,
  };
}

export function auditRecordMessage(
  row: AuditRecordRow,
): MessageInitShape<typeof AuditRecordSchema> {
  return {
    id: row.id,
    kind: row.kind,
    actor: row.actor,
    targetType: row.target_type,
    targetId: row.target_id,
    targetKey: row.target_key,
    details: row.details,
    requestId: row.request_id,
    createdAt: iso(row.created_at),
  };
}
