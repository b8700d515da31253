import { randomUUID } from 'node:crypto';
import { hashToken, randomToken, verifyTokenAgainstHash } from '@gateway/crypto';
import { GatewayError } from '@gateway/errors';
import { gatewayMetrics } from '@gateway/telemetry';
import type { AuthFlowDeps } from './auth-flow-deps.js';
import type { EnvironmentClients } from './environment-clients.js';
import {
  buildAuthorizeUrl,
  codeChallengeOf,
  exchangeAuthorizationCode,
  verifyIdToken,
} from './identity-provider-client.js';
import { onboardingPageUrl } from './onboarding-redirect.js';
import type { OnboardingMode, SessionRecord, TransactionRecord } from './store/auth-flow-store.js';
import { grantRole, permissionsOf, PLATFORM_ADMIN, provisionUser } from './users.js';

/** A bound transaction stays readable this long after the callback (onboarding pages). */
const RESUME_WINDOW_MS = 60 * 60 * 1000;

type SignInOutcome = 'handoff' | 'onboarding_global' | 'onboarding_platform';

export type LoginFlow = ReturnType<typeof createLoginFlow>;

export function createLoginFlow(deps: AuthFlowDeps, environments: EnvironmentClients) {
  const now = deps.now ?? (() => new Date());
  const { settings, store, keyring } = deps;

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
    const client = await environments.get(prepared.environmentKey, { fresh: true });
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
  async function completeLogin(request: { code: string; state: string }) {
    try {
      const answer = await runCallback(request);
      gatewayMetrics.recordSignInOutcome(answer.outcome);
      return {
        redirectUrl: answer.redirectUrl,
        sessionToken: answer.sessionToken,
        sessionExpiresAt: answer.sessionExpiresAt,
      };
    } catch (error) {
      gatewayMetrics.recordSignInOutcome(
        error instanceof GatewayError ? error.code : 'INTERNAL_ERROR',
      );
      throw error;
    }
  }

  async function runCallback(request: { code: string; state: string }) {
    const at = now();
    const transaction = await store.consumeTransaction(hashToken(request.state), at.getTime());
    if (transaction === undefined) {
      throw new GatewayError('NOT_FOUND', 'The login is unknown, expired or already used.');
    }
    // Step 2: the environment captured at start, never the platform's current binding.
    const client = await environments.get(transaction.environmentKey, { fresh: true });
    if (!client.active) {
      throw new GatewayError(
        'IDENTITY_ENVIRONMENT_INACTIVE',
        'The identity environment is inactive.',
      );
    }
    const document = await deps.discovery.get(client.issuer);
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
    // Step 4.
    const user = await provisionUser(
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
    // Spec 2.5: an HTTPS picture fills an empty avatar, the name an unset display name.
    await deps.onboarding.applyIdentityClaims({
      userId: user.id,
      ...(verified.picture === undefined ? {} : { picture: verified.picture }),
      ...(verified.name === undefined ? {} : { name: verified.name }),
    });
    // Step 5: the bootstrap list only grants, and only for verified deployment logins.
    const email = verified.email?.toLowerCase();
    if (
      client.deployment &&
      verified.emailVerified &&
      email !== undefined &&
      settings.bootstrapEmails.includes(email)
    ) {
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
    // Step 7: the session, with the permission snapshot (spec 2.6).
    const sessionToken = randomToken();
    const sessionId = randomUUID();
    const session: SessionRecord = {
      id: sessionId,
      tokenHash: hashToken(sessionToken),
      userId: user.id,
      environmentKey: client.environmentKey,
      platformKey: transaction.platformKey,
      permissions: await permissionsOf(deps.db.knex, user, client.deployment),
      idTokenEncrypted: keyring.encrypt(idToken, `id-token:${sessionId}`),
      createdAt: at.getTime(),
      expiresAt: at.getTime() + settings.sessionTtlSeconds * 1000,
    };
    await store.createSession(session);
    const bound = await store.bindTransaction(transaction.id, {
      userId: user.id,
      sessionId,
      keepUntil: at.getTime() + RESUME_WINDOW_MS,
    });
    if (bound === 'already_bound') {
      throw new GatewayError(
        'AUTH_TRANSACTION_ALREADY_BOUND',
        'The login is already bound to a user.',
      );
    }
    if (bound === 'not_found') throw new GatewayError('NOT_FOUND', 'The login expired.');
    // Steps 6 and 8.
    const { redirectUrl, outcome } = await nextStep(
      { ...transaction, userId: user.id, sessionId },
      client.issuer,
      sessionToken,
    );
    return {
      outcome,
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
    const platform = await deps.registry.getPlatform({ platformKey: transaction.platformKey });
    if (platform.platform?.active !== true)
      throw new GatewayError('NOT_FOUND', 'Unknown or inactive platform.');
    const client = await environments.get(transaction.environmentKey);
    return (await nextStep(transaction, client.issuer, request.sessionToken)).redirectUrl;
  }

  /**
   * Spec 4.2 steps 6 and 8, 4.3: onboarding is evaluated on the server every time, through
   * the membership bootstrap (created NOT_STARTED, recorded COMPLETE when nothing required
   * is missing, spec 3.7). A missing required global field sends the browser to the global
   * step in every mode; in central mode a missing platform field to the platform step;
   * otherwise the handoff is issued.
   */
  async function nextStep(
    transaction: TransactionRecord & { userId: string | null; sessionId: string | null },
    issuer: string,
    sessionToken: string,
  ): Promise<{ redirectUrl: string; outcome: SignInOutcome }> {
    if (transaction.userId === null || transaction.sessionId === null)
      throw new Error('transaction not bound');
    const { status: evaluation } = await deps.onboarding.bootstrapMembership({
      userId: transaction.userId,
      platformKey: transaction.platformKey,
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
    return {
      redirectUrl: await issueHandoff(
        transaction,
        transaction.userId,
        transaction.sessionId,
        sessionToken,
      ),
      outcome: 'handoff',
    };
  }

  /** Spec 2.9: a handoff code, stored as a hash, single use, at most one per transaction. */
  async function issueHandoff(
    transaction: TransactionRecord,
    userId: string,
    sessionId: string,
    sessionToken: string,
  ): Promise<string> {
    const code = `handoff_${randomToken()}`;
    const codeHash = hashToken(code);
    const createdAt = now().getTime();
    const issued = await store.issueHandoff({
      codeHash,
      transactionId: transaction.id,
      platformId: transaction.platformId,
      platformKey: transaction.platformKey,
      callbackUrl: transaction.callbackUrl,
      userId,
      sessionId,
      sessionTokenEncrypted: keyring.encrypt(sessionToken, `handoff:${codeHash}`),
      createdAt,
      expiresAt: createdAt + settings.handoffTtlSeconds * 1000,
    });
    if (issued === 'conflict') {
      throw new GatewayError('CONFLICT', 'A handoff was already issued for this login.');
    }
    const callback = new URL(transaction.callbackUrl);
    callback.searchParams.set('code', code);
    return callback.href;
  }

  return { startLogin, completeLogin, resumeLogin };
}
