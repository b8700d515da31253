import type { ServiceImpl } from '@connectrpc/connect';
import type { RegistryService } from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import { createLastUsedRecorder, verifyCredential, type CredentialKind } from './credentials.js';
import {
  createPlatformCredential,
  deletePlatformCredential,
  revokePreviousPlatformCredentialSecret,
  rotatePlatformCredential,
} from './platforms.js';
import type { RegistryDeps } from './registry-deps.js';
import { changeContextOf, issuedCredentialMessage, platformMessage } from './registry-messages.js';

type Rpcs = ServiceImpl<typeof RegistryService>;

type CredentialRpcs = Pick<
  Rpcs,
  | 'createPlatformCredential'
  | 'rotatePlatformCredential'
  | 'revokePreviousPlatformCredentialSecret'
  | 'deletePlatformCredential'
  | 'verifyPlatformCredential'
>;

/** The RPCs that issue, rotate, revoke and verify platform credentials. */
export function credentialRpcs(
  deps: RegistryDeps,
  options: { onBackgroundError: (error: unknown) => void },
): CredentialRpcs {
  return {
    createPlatformCredential: createPlatformCredentialRpc(deps),
    rotatePlatformCredential: rotatePlatformCredentialRpc(deps),
    revokePreviousPlatformCredentialSecret: async (request) => {
      const view = await revokePreviousPlatformCredentialSecret(
        deps,
        changeContextOf(request.context),
        request.platformKey,
        request.credentialId,
      );
      return { platform: platformMessage(view) };
    },
    deletePlatformCredential: async (request) => {
      const view = await deletePlatformCredential(
        deps,
        changeContextOf(request.context),
        request.platformKey,
        request.credentialId,
      );
      return { platform: platformMessage(view) };
    },
    verifyPlatformCredential: verifyPlatformCredentialRpc(deps, options),
  };
}

function createPlatformCredentialRpc(deps: RegistryDeps): Rpcs['createPlatformCredential'] {
  return async (request) => {
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
  };
}

function rotatePlatformCredentialRpc(deps: RegistryDeps): Rpcs['rotatePlatformCredential'] {
  return async (request) => {
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
  };
}

/**
 * Checks a platform's client id and secret and names its platform and redirect pair, with
 * the stored secret hashes so that the edge can check further secrets of the client id
 * without asking again (until a change is announced). A use is recorded in the background
 * when the secret matches; an unknown client id is UNAUTHORIZED.
 */
function verifyPlatformCredentialRpc(
  deps: RegistryDeps,
  options: { onBackgroundError: (error: unknown) => void },
): Rpcs['verifyPlatformCredential'] {
  const now = deps.now ?? (() => new Date());
  const recordUse = createLastUsedRecorder(deps.db.knex, options.onBackgroundError);
  return async (request) => {
    const at = now();
    const verified = await verifyCredential(
      deps.db.knex,
      request.clientId,
      request.clientSecret,
      at,
    );
    const { credential } = verified;
    if (verified.secretMatches) recordUse(credential.id, at);
    const previousValid =
      credential.previous_secret_hash !== null &&
      credential.previous_secret_expires_at !== null &&
      credential.previous_secret_expires_at.getTime() > at.getTime();
    return {
      secretMatches: verified.secretMatches,
      secretHash: credential.secret_hash,
      ...(previousValid
        ? {
            previousSecretHash: credential.previous_secret_hash ?? '',
            previousSecretExpiresAtMs: BigInt(
              credential.previous_secret_expires_at?.getTime() ?? 0,
            ),
          }
        : {}),
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
  };
}
