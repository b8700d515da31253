import type { JsonObject } from '@bufbuild/protobuf';
import type { ConnectRouter, ServiceImpl } from '@connectrpc/connect';
import { RegistryService } from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import { combineRoutes, createHealthRoutes, type ServiceRoutes } from '@gateway/rpc';
import {
  appendAuditRecord,
  listAuditRecords,
  type AuditKind,
  type AuditTargetType,
} from './audit-log.js';
import { createLastUsedRecorder, verifyCredential, type CredentialKind } from './credentials.js';
import {
  createEnvironment,
  getEnvironment,
  listEnvironments,
  resolveIssuer,
  setEnvironmentActive,
  updateEnvironment,
  validateEnvironment,
  type EnvironmentView,
} from './identity-environments.js';
import {
  activatePlatform,
  activeReturnUrlOrigins,
  archivePlatform,
  createPlatform,
  createPlatformCredential,
  deactivatePlatform,
  deletePlatformCredential,
  getPlatform,
  getPlatformSessionPolicy,
  listPlatforms,
  restorePlatform,
  revokePreviousPlatformCredentialSecret,
  rotatePlatformCredential,
  updatePlatform,
  type OnboardingMode,
} from './platforms.js';
import { environmentClient, prepareLogin, resolveReturnTo } from './login-preparation.js';
import type { IdentityTier, RegistryDeps } from './registry-deps.js';
import {
  auditRecordMessage,
  changeContextOf,
  environmentMessage,
  issuedCredentialMessage,
  platformMessage,
} from './registry-messages.js';

/** Audit kinds other services record through AppendAuditRecord. */
const externallyRecordedKinds = new Set<string>([
  'user_role.bootstrapped',
  'user_role.granted',
  'user_role.revoked',
  'auth.sign_in_succeeded',
  'auth.sign_in_refused',
  'auth.logout',
  'session.revoked',
  'admin.cookie_used',
  'platform.authentication_failed',
]);

const externalTargetTypes = new Set<string>(['platform', 'user', 'platform_client', 'address']);

const tiers = new Set<string>(['development', 'staging', 'production']);
const modes = new Set<string>(['none', 'platform', 'central']);

function tierOf(value: string): IdentityTier {
  if (!tiers.has(value))
    throw new GatewayError('VALIDATION_ERROR', 'tier must be development, staging or production.');
  return value as IdentityTier;
}

function modeOf(value: string): OnboardingMode {
  if (!modes.has(value))
    throw new GatewayError(
      'VALIDATION_ERROR',
      'defaultOnboardingMode must be none, platform or central.',
    );
  return value as OnboardingMode;
}

export function createRegistryServiceImpl(
  deps: RegistryDeps,
  options: { onBackgroundError: (error: unknown) => void },
): ServiceImpl<typeof RegistryService> {
  const now = deps.now ?? (() => new Date());
  const recordUse = createLastUsedRecorder(deps.db.knex, options.onBackgroundError);
  const toEnvironmentMessage = (view: EnvironmentView) =>
    environmentMessage(view, deps.deployment.oidcClientSecretConfigured);
  const environmentResponse = async (key: string) => ({
    environment: toEnvironmentMessage(await getEnvironment(deps, key)),
  });
  return {
    async listIdentityEnvironments() {
      return { items: (await listEnvironments(deps)).map(toEnvironmentMessage) };
    },
    getIdentityEnvironment: (request) => environmentResponse(request.environmentKey),
    async createIdentityEnvironment(request) {
      const view = await createEnvironment(deps, changeContextOf(request.context), {
        environmentKey: request.environmentKey,
        displayName: request.displayName,
        tier: tierOf(request.tier),
        issuer: request.issuer,
        oidcClientId: request.oidcClientId,
        oidcClientSecret: request.oidcClientSecret,
        postLogoutRedirectUri: request.postLogoutRedirectUri,
        metadata: request.metadata ?? {},
      });
      return environmentResponse(view.environment_key);
    },
    async updateIdentityEnvironment(request) {
      await updateEnvironment(deps, changeContextOf(request.context), request.environmentKey, {
        ...(request.displayName === undefined ? {} : { displayName: request.displayName }),
        ...(request.tier === undefined ? {} : { tier: tierOf(request.tier) }),
        ...(request.issuer === undefined ? {} : { issuer: request.issuer }),
        ...(request.oidcClientId === undefined ? {} : { oidcClientId: request.oidcClientId }),
        ...(request.oidcClientSecret === undefined
          ? {}
          : { oidcClientSecret: request.oidcClientSecret.value ?? null }),
        ...(request.postLogoutRedirectUri === undefined
          ? {}
          : { postLogoutRedirectUri: request.postLogoutRedirectUri.value ?? null }),
        ...(request.metadata === undefined ? {} : { metadata: request.metadata }),
      });
      return environmentResponse(request.environmentKey);
    },
    async deactivateIdentityEnvironment(request) {
      await setEnvironmentActive(
        deps,
        changeContextOf(request.context),
        request.environmentKey,
        false,
      );
      return environmentResponse(request.environmentKey);
    },
    async activateIdentityEnvironment(request) {
      await setEnvironmentActive(
        deps,
        changeContextOf(request.context),
        request.environmentKey,
        true,
      );
      return environmentResponse(request.environmentKey);
    },
    async validateIdentityEnvironment(request) {
      const report = await validateEnvironment(deps, request.environmentKey);
      return { environmentKey: request.environmentKey, ok: report.ok, checks: report.checks };
    },
    async resolveIssuer(request) {
      const environment = await resolveIssuer(deps, request.issuer);
      if (environment === undefined) return { found: false };
      return {
        found: true,
        environmentKey: environment.environment_key,
        active: environment.active,
        deployment: environment.source === 'deployment',
        issuer: environment.issuer,
        tier: environment.tier,
      };
    },

    async listPlatforms(request) {
      const views = await listPlatforms(deps, {
        ...(request.identityEnvironmentKey === undefined
          ? {}
          : { identityEnvironmentKey: request.identityEnvironmentKey }),
        archived: request.archived,
      });
      return { items: views.map(platformMessage) };
    },
    async getPlatform(request) {
      return { platform: platformMessage(await getPlatform(deps.db.knex, request.platformKey)) };
    },
    async getPlatformSessionPolicy(request) {
      const policy = await getPlatformSessionPolicy(deps.db.knex, request.platformKey);
      return { ...policy, sessionsNotBeforeMs: BigInt(policy.sessionsNotBeforeMs) };
    },
    async createPlatform(request) {
      const { view, issued } = await createPlatform(deps, changeContextOf(request.context), {
        platformKey: request.platformKey,
        displayName: request.displayName,
        identityEnvironmentKey: request.identityEnvironmentKey,
        redirectPairs: request.redirectPairs,
        defaultOnboardingMode:
          request.defaultOnboardingMode === undefined
            ? undefined
            : modeOf(request.defaultOnboardingMode),
        centralOnboardingEnabled: request.centralOnboardingEnabled,
        platformOnboardingPath: request.platformOnboardingPath,
        metadata: request.metadata ?? {},
        adminConsole: request.adminConsole,
      });
      return { platform: platformMessage(view), credentials: issued.map(issuedCredentialMessage) };
    },
    async updatePlatform(request) {
      const { view, issued } = await updatePlatform(
        deps,
        changeContextOf(request.context),
        request.platformKey,
        {
          ...(request.displayName === undefined ? {} : { displayName: request.displayName }),
          ...(request.identityEnvironmentKey === undefined
            ? {}
            : { identityEnvironmentKey: request.identityEnvironmentKey }),
          ...(request.replaceRedirectPairs ? { redirectPairs: request.redirectPairs } : {}),
          ...(request.defaultOnboardingMode === undefined
            ? {}
            : { defaultOnboardingMode: modeOf(request.defaultOnboardingMode) }),
          ...(request.centralOnboardingEnabled === undefined
            ? {}
            : { centralOnboardingEnabled: request.centralOnboardingEnabled }),
          ...(request.platformOnboardingPath === undefined
            ? {}
            : { platformOnboardingPath: request.platformOnboardingPath.value ?? null }),
          ...(request.metadata === undefined ? {} : { metadata: request.metadata as JsonObject }),
          ...(request.adminConsole === undefined ? {} : { adminConsole: request.adminConsole }),
        },
      );
      return { platform: platformMessage(view), credentials: issued.map(issuedCredentialMessage) };
    },
    async deactivatePlatform(request) {
      return {
        platform: platformMessage(
          await deactivatePlatform(deps, changeContextOf(request.context), request.platformKey),
        ),
      };
    },
    async activatePlatform(request) {
      return {
        platform: platformMessage(
          await activatePlatform(deps, changeContextOf(request.context), request.platformKey),
        ),
      };
    },
    async archivePlatform(request) {
      return {
        platform: platformMessage(
          await archivePlatform(deps, changeContextOf(request.context), request.platformKey),
        ),
      };
    },
    async restorePlatform(request) {
      return {
        platform: platformMessage(
          await restorePlatform(deps, changeContextOf(request.context), request.platformKey),
        ),
      };
    },

    async createPlatformCredential(request) {
      if (request.kind !== 'bff' && request.kind !== 'backend') {
        throw new GatewayError('VALIDATION_ERROR', 'kind must be bff or backend.');
      }
      const { view, issued } = await createPlatformCredential(
        deps,
        changeContextOf(request.context),
        request.platformKey,
        {
          kind: request.kind as CredentialKind,
          redirectPairId: request.redirectPairId,
        },
      );
      return { platform: platformMessage(view), credentials: issued.map(issuedCredentialMessage) };
    },
    async rotatePlatformCredential(request) {
      const { view, issued } = await rotatePlatformCredential(
        deps,
        changeContextOf(request.context),
        request.platformKey,
        request.credentialId,
        {
          revokePreviousImmediately: request.revokePreviousImmediately,
          rotateClientId: request.rotateClientId,
        },
      );
      return { platform: platformMessage(view), credentials: issued.map(issuedCredentialMessage) };
    },
    async revokePreviousPlatformCredentialSecret(request) {
      const view = await revokePreviousPlatformCredentialSecret(
        deps,
        changeContextOf(request.context),
        request.platformKey,
        request.credentialId,
      );
      return { platform: platformMessage(view) };
    },
    async deletePlatformCredential(request) {
      const view = await deletePlatformCredential(
        deps,
        changeContextOf(request.context),
        request.platformKey,
        request.credentialId,
      );
      return { platform: platformMessage(view) };
    },
    async verifyPlatformCredential(request) {
      const at = now();
      const verified = await verifyCredential(
        deps.db.knex,
        request.clientId,
        request.clientSecret,
        at,
      );
      recordUse(verified.credential.id, at);
      return {
        credentialId: verified.credential.id,
        kind: verified.credential.kind,
        platformId: verified.credential.platform_id,
        platformKey: verified.platformKey,
        platformActive: verified.platformStatus === 'active',
        ...(verified.credential.redirect_pair_id === null
          ? {}
          : { redirectPairId: verified.credential.redirect_pair_id }),
        ...(verified.callbackUrl === null ? {} : { callbackUrl: verified.callbackUrl }),
      };
    },

    async listAuditRecords(request) {
      const page = request.page > 0 ? request.page : 1;
      const pageSize = request.pageSize > 0 ? Math.min(request.pageSize, 100) : 25;
      const { items, total } = await listAuditRecords(deps.db.knex, {
        ...(request.kind === undefined ? {} : { kind: request.kind }),
        ...(request.targetKey === undefined ? {} : { targetKey: request.targetKey }),
        page,
        pageSize,
      });
      return { items: items.map(auditRecordMessage), total, page, pageSize };
    },
    async prepareLogin(request) {
      const prepared = await prepareLogin(deps, {
        platformKey: request.platformKey,
        returnTo: request.returnTo,
        onboardingMode: request.onboardingMode,
      });
      return {
        platformId: prepared.view.platform.id,
        platformKey: prepared.view.platform.platform_key,
        displayName: prepared.view.platform.display_name,
        onboardingMode: prepared.onboardingMode,
        centralOnboardingEnabled: prepared.view.platform.central_onboarding_enabled,
        redirectPairId: prepared.pair.id,
        callbackUrl: prepared.pair.callbackUrl,
        returnTo: prepared.returnTo,
        environmentKey: prepared.view.environment.environment_key,
      };
    },
    async resolveReturnTo(request) {
      const resolved = await resolveReturnTo(deps, {
        platformKey: request.platformKey,
        returnTo: request.returnTo,
      });
      return { returnTo: resolved.returnTo, redirectPairId: resolved.pairId };
    },
    async getEnvironmentClient(request) {
      const client = await environmentClient(deps, request.environmentKey);
      return {
        environmentKey: client.environment.environment_key,
        issuer: client.environment.issuer,
        tier: client.environment.tier,
        active: client.environment.active,
        deployment: client.environment.source === 'deployment',
        clientId: client.clientId,
        clientSecret: client.clientSecret,
        ...(client.environment.post_logout_redirect_uri === null
          ? {}
          : { postLogoutRedirectUri: client.environment.post_logout_redirect_uri }),
      };
    },
    async appendAuditRecord(request) {
      if (!externallyRecordedKinds.has(request.kind)) {
        throw new GatewayError(
          'VALIDATION_ERROR',
          `Audit kind ${request.kind} is recorded by the registry itself.`,
        );
      }
      // One insert, no transaction of its own: sign-ins and logouts record through here.
      await appendAuditRecord(deps.db.knex, {
        kind: request.kind as AuditKind,
        ...changeContextOf(request.context),
        target: {
          type: externalTargetTypes.has(request.targetType)
            ? (request.targetType as AuditTargetType)
            : 'platform',
          id: request.targetId,
          key: request.targetKey,
        },
        details: request.details ?? {},
      });
      return {};
    },
    async getCorsOrigins() {
      const environments = await listEnvironments(deps);
      const issuerOrigins = environments
        .filter((env) => env.active)
        .map((env) => new URL(env.issuer).origin);
      return {
        origins: [...new Set([...issuerOrigins, ...(await activeReturnUrlOrigins(deps.db.knex))])],
      };
    },
  };
}

export type RegistryServiceOptions = {
  deps: RegistryDeps;
  /** Deadline of each readiness probe of the store. */
  probeTimeoutMs: number;
  onBackgroundError: (error: unknown) => void;
};

/** The registry service's Connect routes: RegistryService and the gRPC health service. */
export function createRegistryRoutes(options: RegistryServiceOptions): ServiceRoutes {
  const { db } = options.deps;
  return combineRoutes(
    (router: ConnectRouter) =>
      router.service(RegistryService, createRegistryServiceImpl(options.deps, options)),
    createHealthRoutes({
      serviceName: RegistryService.typeName,
      probes: [{ name: 'postgres', check: () => db.ping(options.probeTimeoutMs) }],
      probeTimeoutMs: options.probeTimeoutMs,
    }),
  );
}
