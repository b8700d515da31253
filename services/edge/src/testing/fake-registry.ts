import { createHash } from 'node:crypto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import { implementationOf, type ServiceImplementation } from '@gateway/rpc';
import {
  RegistryService,
  type AuditRecordSchema,
  type IdentityEnvironmentSchema,
  type IssuedCredentialSchema,
  type PlatformSchema,
} from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';

// A stand-in RegistryService for the edge's tests, called in process as the all-in-one calls
// a service, with the services' real interceptors. The real registry service is being written in
// parallel; this fake answers with fixed, fully populated messages and records every call,
// so the edge's authentication, validation, mapping and CORS can be tested over real HTTP
// now. End-to-end tests against the real registry live with the all-in-one gateway.

type Impl = ServiceImpl<typeof RegistryService>;
export type RegistryMethod = keyof Impl;

export type IssuerEntry = { environmentKey: string; active: boolean; deployment: boolean };

/** A platform key known to VerifyPlatformCredential. */
export type PlatformCredentialEntry = {
  clientSecret: string;
  kind: 'bff' | 'backend';
  platformKey: string;
  platformActive: boolean;
  callbackUrl?: string;
};

export type FakeRegistry = {
  implementation: ServiceImplementation;
  /** Every call in order: the method's local name and the request message. */
  calls: { method: RegistryMethod; request: Record<string, unknown> }[];
  /** Calls of one method, oldest first. */
  requestsOf(method: RegistryMethod): Record<string, unknown>[];
  /** Issuer → environment, for ResolveIssuer. Absent issuers are "not found". */
  issuers: Map<string, IssuerEntry>;
  /** What GetCorsOrigins answers. */
  corsOrigins: string[];
  /** Client id → platform key, for VerifyPlatformCredential. Unknown ids are UNAUTHORIZED. */
  platformCredentials: Map<string, PlatformCredentialEntry>;
  /**
   * Verifications of unknown or wrong credentials answer only once this settles (recorded at
   * once): refusals held in flight, as a registry slowed by a flood of guesses holds them.
   */
  refusalsWaitFor: Promise<void> | undefined;
  /** The next call (of any method) fails with this error. */
  failNextWith(error: GatewayError): void;
  reset(): void;
};

export const CREATED_AT = '2025-01-02T03:04:05.000Z';
export const PAIR_ID = '6f1d8f0e-4a4b-4c8e-9f51-2f7a3c1b9d01';
export const CREDENTIAL_ID = '0b7a4c3e-2d51-4f6a-8e9b-7c1d2e3f4a5b';
export const ISSUED_SECRET = 'secret-shown-once';

export function samplePlatform(platformKey: string): MessageInitShape<typeof PlatformSchema> {
  return {
    id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
    platformKey,
    displayName: 'Shop',
    active: true,
    status: 'active',
    centralOnboardingEnabled: false,
    // platformOnboardingPath and metadata deliberately unset: they map to null and {}.
    defaultOnboardingMode: 'platform',
    credentialsConfigured: true,
    credentials: [
      {
        id: CREDENTIAL_ID,
        kind: 'bff',
        redirectPairId: PAIR_ID,
        clientId: 'pc_shop_bff',
        createdAt: CREATED_AT,
        // rotatedAt, lastUsedAt, previousSecretExpiresAt unset: null.
      },
      {
        id: '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f',
        kind: 'backend',
        clientId: 'pc_shop_backend',
        createdAt: CREATED_AT,
        lastUsedAt: CREATED_AT,
      },
    ],
    redirectPairs: [
      {
        id: PAIR_ID,
        label: 'Web',
        returnUrl: 'https://shop.example.test',
        callbackUrl: 'https://shop.example.test/auth/callback',
        isDefault: true,
      },
    ],
    identityEnvironment: {
      key: 'PROD',
      displayName: 'Production',
      tier: 'production',
      active: true,
    },
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
  };
}

export function sampleIssuedCredential(): MessageInitShape<typeof IssuedCredentialSchema> {
  return {
    id: CREDENTIAL_ID,
    kind: 'bff',
    redirectPairId: PAIR_ID,
    clientId: 'pc_shop_bff',
    clientSecret: ISSUED_SECRET,
  };
}

export function sampleEnvironment(
  environmentKey: string,
): MessageInitShape<typeof IdentityEnvironmentSchema> {
  return {
    id: '3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5a6b7',
    environmentKey,
    displayName: 'Staging',
    tier: 'staging',
    source: 'database',
    active: true,
    issuer: 'https://id.staging.example.test/api/auth/env/STAGING',
    oidcClientId: 'gateway-staging',
    oidcClientSecretConfigured: true,
    // postLogoutRedirectUri unset: null.
    grantsGatewayPermissions: false,
    metadata: { owner: 'team-a', tags: ['x'] },
    platformCount: 2,
    activePlatformCount: 1,
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
    platforms: [{ platformKey: 'SHOP', displayName: 'Shop', active: true }],
  };
}

export function sampleAuditRecord(): MessageInitShape<typeof AuditRecordSchema> {
  return {
    id: '7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a',
    kind: 'platform.credential_rotated',
    actor: { kind: 'machine', clientId: 'test-machine', environmentKey: 'PROD' },
    targetType: 'platform',
    targetId: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
    targetKey: 'SHOP',
    details: { credentialId: CREDENTIAL_ID },
    requestId: 'req-1',
    createdAt: CREATED_AT,
  };
}

export function createFakeRegistry(): FakeRegistry {
  const calls: FakeRegistry['calls'] = [];
  let failure: GatewayError | undefined;
  const fake: FakeRegistry = {
    calls,
    requestsOf: (method) => calls.filter((call) => call.method === method).map((c) => c.request),
    issuers: new Map(),
    corsOrigins: [],
    platformCredentials: new Map(),
    refusalsWaitFor: undefined,
    failNextWith(error) {
      failure = error;
    },
    reset() {
      calls.length = 0;
      failure = undefined;
    },
    get implementation() {
      return implementationOf(RegistryService, implementation);
    },
  };

  const record = (method: RegistryMethod, request: object) => {
    calls.push({ method, request: request as Record<string, unknown> });
    if (failure !== undefined) {
      const error = failure;
      failure = undefined;
      throw error;
    }
  };
  const platformOf = (request: { platformKey: string }) => samplePlatform(request.platformKey);
  const withPlatform = (method: RegistryMethod) => (request: { platformKey: string }) => {
    record(method, request);
    return { platform: platformOf(request) };
  };
  const withCredentials = (method: RegistryMethod) => (request: { platformKey: string }) => {
    record(method, request);
    return { platform: platformOf(request), credentials: [sampleIssuedCredential()] };
  };
  const withEnvironment = (method: RegistryMethod) => (request: { environmentKey: string }) => {
    record(method, request);
    return { environment: sampleEnvironment(request.environmentKey) };
  };

  const implementation: Partial<Impl> = {
    resolveIssuer(request) {
      record('resolveIssuer', request);
      const entry = fake.issuers.get(request.issuer);
      return entry === undefined
        ? { found: false }
        : { found: true, issuer: request.issuer, tier: 'production', ...entry };
    },
    async verifyPlatformCredential(request) {
      record('verifyPlatformCredential', request);
      const entry = fake.platformCredentials.get(request.clientId);
      const secretMatches = entry?.clientSecret === request.clientSecret;
      if (!secretMatches) await fake.refusalsWaitFor;
      if (entry === undefined) {
        throw new GatewayError('UNAUTHORIZED', 'Unknown platform credentials.');
      }
      return {
        secretMatches,
        secretHash: createHash('sha256').update(entry.clientSecret).digest('base64url'),
        credentialId: CREDENTIAL_ID,
        kind: entry.kind,
        platformId: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
        platformKey: entry.platformKey,
        platformActive: entry.platformActive,
        ...(entry.kind === 'bff' ? { redirectPairId: PAIR_ID } : {}),
        ...(entry.callbackUrl === undefined ? {} : { callbackUrl: entry.callbackUrl }),
      };
    },
    getCorsOrigins(request) {
      record('getCorsOrigins', request);
      return { origins: fake.corsOrigins };
    },
    listPlatforms(request) {
      record('listPlatforms', request);
      return { items: [samplePlatform('SHOP'), samplePlatform('BLOG')] };
    },
    getPlatform: withPlatform('getPlatform'),
    createPlatform: withCredentials('createPlatform'),
    updatePlatform: withCredentials('updatePlatform'),
    deactivatePlatform: withPlatform('deactivatePlatform'),
    activatePlatform: withPlatform('activatePlatform'),
    archivePlatform: withPlatform('archivePlatform'),
    restorePlatform: withPlatform('restorePlatform'),
    createPlatformCredential: withCredentials('createPlatformCredential'),
    rotatePlatformCredential: withCredentials('rotatePlatformCredential'),
    revokePreviousPlatformCredentialSecret: withPlatform('revokePreviousPlatformCredentialSecret'),
    deletePlatformCredential: withPlatform('deletePlatformCredential'),
    listIdentityEnvironments(request) {
      record('listIdentityEnvironments', request);
      return { items: [{ ...sampleEnvironment('STAGING'), platforms: [] }] };
    },
    getIdentityEnvironment: withEnvironment('getIdentityEnvironment'),
    createIdentityEnvironment: withEnvironment('createIdentityEnvironment'),
    updateIdentityEnvironment: withEnvironment('updateIdentityEnvironment'),
    deactivateIdentityEnvironment: withEnvironment('deactivateIdentityEnvironment'),
    activateIdentityEnvironment: withEnvironment('activateIdentityEnvironment'),
    validateIdentityEnvironment(request) {
      record('validateIdentityEnvironment', request);
      return {
        environmentKey: request.environmentKey,
        ok: false,
        checks: [
          { name: 'discovery', status: 'pass', message: 'Discovery matches.' },
          { name: 'secret', status: 'fail', message: 'The stored secret does not decrypt.' },
        ],
      };
    },
    listAuditRecords(request) {
      record('listAuditRecords', request);
      return {
        items: [sampleAuditRecord()],
        total: 1,
        page: request.page,
        pageSize: request.pageSize,
      };
    },
  };
  return fake;
}
