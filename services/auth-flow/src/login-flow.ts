import { randomUUID } from 'node:crypto';
import { hashToken, randomToken, verifyTokenAgainstHash } from '@gateway/crypto';
import { GatewayError } from '@gateway/errors';
import { gatewayMetrics } from '@gateway/telemetry';
import type { AuthFlowDeps } from './auth-flow-deps.js';
import type { EnvironmentClients } from './environment-clients.js';
import { sealIdToken } from './id-token-sealing.js';
import {
  buildAuthorizeUrl,
  checkAuthorizationResponseIssuer,
  codeChallengeOf,
  exchangeAuthorizationCode,
  verifyIdToken,
} from './identity-provider-client.js';
import { onboardingPageUrl } from './onboarding-redirect.js';
import { createSecurityAudit, type SignInAttempt } from './security-audit.js';
import type {
  HandoffRecord,
  HandoffSnapshot,
  OnboardingMode,
  SessionRecord,
  TransactionRecord,
} from './store/auth-flow-store.js';
import { findUser, grantRole, permissionsOf, PLATFORM_ADMIN, provisionUser } from './users.js';

/** A bound transaction stays readable this long after the callback (onboarding pages). */
const RESUME_WINDOW_MS = 60 * 60 * 1000;

/** The onboarding evaluation a login acts on (BootstrapMembership's status, spec 2.14). */
type Evaluation = {
  platformStatus: string;
  platformMissingFields: string[];
  requirementVersion: number;
};

/** Where the login goes next (spec 4.2 step 8, 4.3). */
type Next =
  | { outcome: 'onboarding_global' | 'onboarding_platform'; redirectUrl: string }
  | { outcome: 'handoff'; evaluation: Evaluation };

/** What the identity provider's redirect brought to the callback (spec 4.2). */
type CallbackRequest = { code: string; state: string; iss: string | undefined };

export type LoginFlow = ReturnType<typeof createLoginFlow>;

export function createLoginFlow(deps: AuthFlowDeps, environments: EnvironmentClients) {
  const now = deps.now ?? (() => new Date());
  const { settings, store, keyring } = deps;
  const audit = createSecurityAudit(deps.registry);

  /** Spec 4.1. */
  async function startLogin(request: {
    platformKey: string;
    returnTo: string;
    onboardingMode: string | undefined;
    signUp: boolean;
  }): Promise<{ authorizeUrl: string; transactionId: string }> {
    const prepared = await deps.registry.prepareLogin({
      platformKey: request.platformKey,
      returnTo: request.returnTo,
      ...(request.onboardingMode === undefined ? {} : { onboardingMode: request.onboardingMode }),
    });
    const client = await environments.get(prepared.environmentKey);
    const document = await deps.discovery.get(client.issuer);
    const state = randomToken();
    const nonce = randomToken();
    const verifier = randomToken();
    const id = randomUUID();
    const createdAt = now().getTime();
    const transaction: TransactionRecord = {
      id,
      stateHash: hashToken(state),
      nonceHash: hashToken(nonce),
      pkceVerifierEncrypted: keyring.encrypt(verifier, `pkce:${id}`),
      platformId: prepared.platformId,
      platformKey: prepared.platformKey,
      environmentKey: prepared.environmentKey,
      onboardingMode: prepared.onboardingMode as OnboardingMode,
      centralOnboardingEnabled: prepared.centralOnboardingEnabled,
      redirectPairId: prepared.redirectPairId,
      callbackUrl: prepared.callbackUrl,
      returnTo: prepared.returnTo,
      createdAt,
      expiresAt: createdAt + settings.transactionTtlSeconds * 1000,
      consumedAt: null,
      userId: null,
      sessionId: null,
    };
    const authorizeUrl = buildAuthorizeUrl(document, {
      clientId: client.clientId,
      redirectUri: settings.callbackUrl,
      state,
      nonce,
      codeChallenge: codeChallengeOf(verifier),
      signUp: request.signUp,
    });
    await store.createTransaction(transaction);
    return { authorizeUrl, transactionId: id };
  }

  /**
   * Spec 4.2, counted in `gateway.signin.outcomes`: `handoff`, `onboarding_global`,
   * `onboarding_platform`, or the error code of a failed callback.
   */
  async function completeLogin(request: CallbackRequest) {
    const attempt: SignInAttempt = {};
    try {
      const answer = await runCallback(request, attempt);
      gatewayMetrics.recordSignInOutcome(answer.outcome);
      return {
        redirectUrl: answer.redirectUrl,
        sessionToken: answer.sessionToken,
        sessionExpiresAt: answer.sessionExpiresAt,
      };
    } catch (error) {
      const code = error instanceof GatewayError ? error.code : 'INTERNAL_ERROR';
      gatewayMetrics.recordSignInOutcome(code);
      // Only a callback whose state named a transaction is recorded: unknown states are
      // free to send and would let anyone fill the audit log.
      if (attempt.platformKey !== undefined) await audit.signInRefused(attempt, code);
      throw error;
    }
  }

  async function runCallback(request: CallbackRequest, attempt: SignInAttempt) {
    const at = now();
    const transaction = await store.consumeTransaction(hashToken(request.state), at.getTime());
    if (transaction === undefined) {
      throw new GatewayError('NOT_FOUND', 'The login is unknown, expired or already used.');
    }
    attempt.platformId = transaction.platformId;
    attempt.platformKey = transaction.platformKey;
    attempt.environmentKey = transaction.environmentKey;
    // Step 2: the environment captured at start, never the platform's current binding.
    const client = await environments.get(transaction.environmentKey);
    if (!client.active) {
      throw new GatewayError(
        'IDENTITY_ENVIRONMENT_INACTIVE',
        'The identity environment is inactive.',
      );
    }
    const document = await deps.discovery.get(client.issuer);
    // RFC 9207: before the code goes anywhere, the response must come from this issuer.
    checkAuthorizationResponseIssuer(document, client.issuer, request.iss);
    const verifier = keyring.decryptString(
      transaction.pkceVerifierEncrypted,
      `pkce:${transaction.id}`,
    );
    const idToken = await exchangeAuthorizationCode(document, client, {
      code: request.code,
      redirectUri: settings.callbackUrl,
      codeVerifier: verifier,
      timeoutMs: settings.identityTimeoutMs,
    });
    // Step 3.
    const verified = await verifyIdToken(idToken, document, client, deps.jwks);
    if (!verifyTokenAgainstHash(verified.nonce, transaction.nonceHash)) {
      throw new GatewayError('NONCE_MISMATCH', 'The ID token nonce does not match the login.');
    }
    // Step 4 (one statement, which also answers the role for step 7).
    const { user, platformAdmin } = await provisionUser(
      deps.db.knex,
      {
        issuer: client.issuer,
        subject: verified.subject,
        environmentKey: client.environmentKey,
        email: verified.email,
        emailVerified: verified.emailVerified,
        picture: verified.picture,
        name: verified.name,
      },
      at,
    );
    attempt.userId = user.id;
    // Step 5: the bootstrap list only grants, and only for verified deployment logins.
    const email = verified.email?.toLowerCase();
    let admin = platformAdmin;
    if (
      client.deployment &&
      verified.emailVerified &&
      email !== undefined &&
      settings.bootstrapEmails.includes(email)
    ) {
      // Granted now or before: the user holds the role either way.
      admin = true;
      if (await grantRole(deps.db.knex, user.id, PLATFORM_ADMIN, 'bootstrap', at)) {
        await deps.registry.appendAuditRecord({
          context: { actor: { kind: 'system', subject: 'PLATFORM_ADMIN_BOOTSTRAP_EMAILS' } },
          kind: 'user_role.bootstrapped',
          targetType: 'user',
          targetId: user.id,
          targetKey: email,
          details: { role: PLATFORM_ADMIN, environmentKey: client.environmentKey },
        });
      }
    }
    // Step 6: membership bootstrap and onboarding evaluation, before anything is written, so
    // that steps 7 and 8 are one atomic store write. The same call applies spec 2.5's claims
    // (an HTTPS picture fills an empty avatar, the name an unset display name).
    const next = await nextStep(transaction, user.id, client.issuer, {
      ...(verified.picture === undefined ? {} : { picture: verified.picture }),
      ...(verified.name === undefined ? {} : { name: verified.name }),
    });
    // Step 7: the session, with the permission snapshot (spec 2.6) and what introspection
    // answers (spec 4.5), bound to the transaction in the same write as the handoff.
    const sessionToken = randomToken();
    const sessionId = randomUUID();
    const snapshot = {
      issuer: user.issuer,
      subject: user.subject,
      email: user.email,
      emailVerified: user.email_verified,
      environmentTier: client.tier,
    };
    const session: SessionRecord = {
      id: sessionId,
      tokenHash: hashToken(sessionToken),
      userId: user.id,
      environmentKey: client.environmentKey,
      platformKey: transaction.platformKey,
      permissions: permissionsOf(admin, client.deployment),
      idTokenEncrypted: sealIdToken(keyring, idToken, { id: sessionId, snapshot }),
      snapshot,
      createdAt: at.getTime(),
      expiresAt: at.getTime() + settings.sessionTtlSeconds * 1000,
    };
    // Step 8: the handoff, when no onboarding step comes first.
    let handoff: HandoffRecord | undefined;
    let redirectUrl: string;
    if (next.outcome === 'handoff') {
      const issued = newHandoff(
        transaction,
        session,
        sessionToken,
        handoffSnapshotOf(
          transaction,
          user,
          client,
          onboardingAnswer(
            next.evaluation,
            transaction.centralOnboardingEnabled ?? (await centralOnboardingOf(transaction)),
          ),
        ),
      );
      handoff = issued.record;
      redirectUrl = callbackWithCode(transaction, issued.code);
    } else {
      redirectUrl = next.redirectUrl;
    }
    const written = await store.createBoundSession({
      transactionId: transaction.id,
      keepUntil: at.getTime() + RESUME_WINDOW_MS,
      session,
      ...(handoff === undefined ? {} : { handoff }),
    });
    if (written === 'already_bound') {
      throw new GatewayError(
        'AUTH_TRANSACTION_ALREADY_BOUND',
        'The login is already bound to a user.',
      );
    }
    if (written === 'not_found') throw new GatewayError('NOT_FOUND', 'The login expired.');
    if (written === 'conflict') {
      throw new GatewayError('CONFLICT', 'A handoff was already issued for this login.');
    }
    await audit.signInSucceeded({
      userId: user.id,
      sessionId,
      platformId: transaction.platformId,
      platformKey: transaction.platformKey,
      environmentKey: client.environmentKey,
      outcome: next.outcome,
    });
    return {
      outcome: next.outcome,
      redirectUrl,
      sessionToken,
      sessionExpiresAt: new Date(session.expiresAt).toISOString(),
    };
  }

  /** Spec 4.3. */
  async function resumeLogin(request: {
    transactionId: string;
    sessionToken: string;
  }): Promise<string> {
    const at = now().getTime();
    const session = await store.getSession(hashToken(request.sessionToken), at);
    if (session === undefined) throw new GatewayError('UNAUTHORIZED', 'Sign in first.');
    const transaction = await store.getTransaction(request.transactionId);
    if (
      transaction === undefined ||
      transaction.consumedAt === null ||
      transaction.userId === null
    ) {
      throw new GatewayError('NOT_FOUND', 'The login is unknown or expired.');
    }
    if (session.environmentKey !== transaction.environmentKey) {
      throw new GatewayError(
        'UNAUTHORIZED',
        'The session belongs to another identity environment.',
      );
    }
    if (session.userId !== transaction.userId) {
      throw new GatewayError('FORBIDDEN', 'The login belongs to another user.');
    }
    const { platform } = await deps.registry.getPlatform({ platformKey: transaction.platformKey });
    if (platform?.active !== true)
      throw new GatewayError('NOT_FOUND', 'Unknown or inactive platform.');
    const client = await environments.get(transaction.environmentKey);
    const next = await nextStep(transaction, transaction.userId, client.issuer);
    if (next.outcome !== 'handoff') return next.redirectUrl;
    // Spec 4.4: what the exchange will answer, as it stands now.
    const user = await findUser(deps.db.knex, transaction.userId);
    if (user === undefined) throw new GatewayError('NOT_FOUND', 'The login is unknown or expired.');
    const { code, record } = newHandoff(
      transaction,
      session,
      request.sessionToken,
      handoffSnapshotOf(
        transaction,
        user,
        client,
        onboardingAnswer(next.evaluation, platform.centralOnboardingEnabled),
      ),
    );
    if ((await store.issueHandoff(record)) === 'conflict') {
      throw new GatewayError('CONFLICT', 'A handoff was already issued for this login.');
    }
    return callbackWithCode(transaction, code);
  }

  /**
   * Spec 4.2 steps 6 and 8, 4.3: onboarding is evaluated on the server every time, through
   * the membership bootstrap (created NOT_STARTED, recorded COMPLETE when nothing required
   * is missing, spec 3.7). A missing required global field sends the browser to the global
   * step in every mode; in central mode a missing platform field to the platform step;
   * otherwise the handoff is issued, with this evaluation as its onboarding answer. A
   * callback passes the ID token's claims, applied to the profile in the same call.
   */
  async function nextStep(
    transaction: TransactionRecord,
    userId: string,
    issuer: string,
    identityClaims?: { picture?: string; name?: string },
  ): Promise<Next> {
    const { status: evaluation } = await deps.onboarding.bootstrapMembership({
      userId,
      platformKey: transaction.platformKey,
      ...(identityClaims === undefined ? {} : { identityClaims }),
    });
    if (evaluation === undefined) throw new Error('onboarding answered no status');
    const page = (scope: 'global' | 'platform') => ({
      redirectUrl: onboardingPageUrl(issuer, {
        platformKey: transaction.platformKey,
        transactionId: transaction.id,
        scope,
      }),
      outcome: `onboarding_${scope}` as const,
    });
    if (evaluation.globalMissingFields.length > 0) return page('global');
    if (transaction.onboardingMode === 'central' && evaluation.platformMissingFields.length > 0) {
      return page('platform');
    }
    return { outcome: 'handoff', evaluation };
  }

  /** A transaction started before its platform's setting was recorded on it. */
  async function centralOnboardingOf(transaction: TransactionRecord): Promise<boolean> {
    const { platform } = await deps.registry.getPlatform({ platformKey: transaction.platformKey });
    return platform?.centralOnboardingEnabled ?? false;
  }

  /**
   * Spec 2.9: a handoff code, stored as a hash, single use, at most one per transaction. It
   * carries what the exchange answers (spec 4.4) and names its session, so the exchange is
   * one atomic redeem: no other read.
   */
  function newHandoff(
    transaction: TransactionRecord,
    session: Pick<SessionRecord, 'id' | 'userId' | 'tokenHash'>,
    sessionToken: string,
    snapshot: HandoffSnapshot,
  ): { code: string; record: HandoffRecord } {
    const code = `handoff_${randomToken()}`;
    const codeHash = hashToken(code);
    const createdAt = now().getTime();
    return {
      code,
      record: {
        codeHash,
        transactionId: transaction.id,
        platformId: transaction.platformId,
        platformKey: transaction.platformKey,
        callbackUrl: transaction.callbackUrl,
        userId: session.userId,
        sessionId: session.id,
        sessionTokenEncrypted: keyring.encrypt(sessionToken, `handoff:${codeHash}`),
        sessionTokenHash: session.tokenHash,
        snapshot,
        createdAt,
        expiresAt: createdAt + settings.handoffTtlSeconds * 1000,
      },
    };
  }

  return { startLogin, completeLogin, resumeLogin };
}

/** Spec 4.4: what the exchange of this handoff answers, as it stands at issuance. */
function handoffSnapshotOf(
  transaction: TransactionRecord,
  user: { subject: string; issuer: string; picture: string | null },
  client: { environmentKey: string; tier: string },
  onboarding: HandoffSnapshot['onboarding'],
): HandoffSnapshot {
  return {
    user: {
      sub: user.subject,
      issuer: user.issuer,
      ...(user.picture === null ? {} : { picture: user.picture }),
    },
    environment: { key: client.environmentKey, tier: client.tier },
    onboarding,
    returnTo: transaction.returnTo,
  };
}

/**
 * Spec 4.4 `onboarding`: the membership status of 3.7 (the login recorded COMPLETE when
 * nothing was missing; IN_PROGRESS always comes with missing fields) and
 * `canCompleteCentrally` from the platform's `centralOnboardingEnabled`.
 */
function onboardingAnswer(
  evaluation: Evaluation,
  canCompleteCentrally: boolean,
): HandoffSnapshot['onboarding'] {
  return {
    status: evaluation.platformStatus,
    requirementVersion: evaluation.requirementVersion,
    missingFields: evaluation.platformMissingFields,
    canCompleteCentrally,
  };
}

function callbackWithCode(transaction: TransactionRecord, code: string): string {
  const callback = new URL(transaction.callbackUrl);
  callback.searchParams.set('code', code);
  return callback.href;
}
