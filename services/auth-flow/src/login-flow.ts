import { randomUUID } from 'node:crypto';
import { hashToken, randomToken, verifyTokenAgainstHash } from '@gateway/crypto';
import { GatewayError } from '@gateway/errors';
import { authorizationErrorRefusal } from '@gateway/oidc';
import { gatewayMetrics } from '@gateway/telemetry';
import type { AuthFlowDeps } from './auth-flow-deps.js';
import type { EnvironmentClients } from './environment-clients.js';
import { handoffSnapshotOf, type Evaluation } from './exchange-answer.js';
import { sealIdToken } from './id-token-sealing.js';
import {
  buildAuthorizeUrl,
  checkAuthorizationResponseIssuer,
  codeChallengeOf,
  exchangeAuthorizationCode,
  verifyIdToken,
} from './identity-provider-client.js';
import { onboardingPageUrl } from './onboarding-redirect.js';
import { createSecurityAudit, type SecurityAudit, type SignInAttempt } from './security-audit.js';
import type {
  HandoffRecord,
  HandoffSnapshot,
  OnboardingMode,
  SessionRecord,
  TransactionRecord,
} from './store/auth-flow-store.js';
import {
  hashCredential,
  newHandoffCode,
  newState,
  slotTagOf,
  taggedToken,
  transactionKeyOf,
} from './store/slot-tags.js';
import {
  findUser,
  grantRole,
  permissionsOf,
  PLATFORM_ADMIN,
  provisionUser,
  type UserRow,
} from './users.js';

/** A bound transaction stays readable this long after the callback (onboarding pages). */
const RESUME_WINDOW_MS = 60 * 60 * 1000;

/** Where the login goes next (spec 4.2 step 8, 4.3). */
type Next =
  | { outcome: 'onboarding_global' | 'onboarding_platform'; redirectUrl: string }
  | { outcome: 'handoff'; evaluation: Evaluation };

/**
 * What the identity provider's redirect brought to the callback (spec 4.2): a code, or the
 * provider's `error` instead (then `code` is empty).
 */
type CallbackRequest = {
  code: string;
  state: string;
  iss: string | undefined;
  identityError: string | undefined;
};

type StartRequest = {
  platformKey: string;
  returnTo: string;
  onboardingMode: string | undefined;
  signUp: boolean;
};

type ResumeRequest = { transactionId: string; sessionToken: string };

/** What every step of the login reads: the service's deps, its clock and its clients. */
type LoginDeps = AuthFlowDeps & {
  now: () => Date;
  environments: EnvironmentClients;
  audit: SecurityAudit;
};

type Client = Awaited<ReturnType<EnvironmentClients['get']>>;
type VerifiedIdToken = Awaited<ReturnType<typeof verifyIdToken>>;

export type LoginFlow = ReturnType<typeof createLoginFlow>;

/** Spec 4.1 (start), 4.2 (callback) and 4.3 (resume after onboarding pages). */
export function createLoginFlow(deps: AuthFlowDeps, environments: EnvironmentClients) {
  const login: LoginDeps = {
    ...deps,
    now: deps.now ?? (() => new Date()),
    environments,
    audit: createSecurityAudit(deps.registry),
  };
  return {
    startLogin: (request: StartRequest) => startLogin(login, request),
    completeLogin: (request: CallbackRequest) => completeLogin(login, request),
    resumeLogin: (request: ResumeRequest) => resumeLogin(login, request),
  };
}

// --- Start (spec 4.1): the platform's login, the transaction, the authorize URL --------------

async function startLogin(
  deps: LoginDeps,
  request: StartRequest,
): Promise<{ authorizeUrl: string; transactionId: string }> {
  const prepared = await deps.registry.prepareLogin({
    platformKey: request.platformKey,
    returnTo: request.returnTo,
    ...(request.onboardingMode === undefined ? {} : { onboardingMode: request.onboardingMode }),
  });
  const client = await deps.environments.get(prepared.environmentKey);
  const document = await deps.discovery.get(client.issuer);
  // The state carries the transaction's slot tag and id; the session token and the code will
  // carry the tag.
  const id = randomUUID();
  const secrets = {
    state: newState(id),
    nonce: randomToken(),
    verifier: randomToken(),
  };
  const transaction = newTransaction(deps, prepared, id, secrets);
  const authorizeUrl = buildAuthorizeUrl(document, {
    clientId: client.clientId,
    redirectUri: deps.settings.callbackUrl,
    state: secrets.state,
    nonce: secrets.nonce,
    codeChallenge: codeChallengeOf(secrets.verifier),
    signUp: request.signUp,
  });
  await deps.store.createTransaction(transaction);
  return { authorizeUrl, transactionId: transaction.id };
}

type PreparedLogin = Awaited<ReturnType<AuthFlowDeps['registry']['prepareLogin']>>;

/** The transaction of a new login: secrets hashed or encrypted, the platform's settings. */
function newTransaction(
  deps: LoginDeps,
  prepared: PreparedLogin,
  id: string,
  secrets: { state: string; nonce: string; verifier: string },
): TransactionRecord {
  const createdAt = deps.now().getTime();
  return {
    id,
    stateHash: hashCredential(secrets.state),
    nonceHash: hashToken(secrets.nonce),
    pkceVerifierEncrypted: deps.keyring.encrypt(secrets.verifier, `pkce:${id}`),
    platformId: prepared.platformId,
    platformKey: prepared.platformKey,
    environmentKey: prepared.environmentKey,
    onboardingMode: prepared.onboardingMode as OnboardingMode,
    centralOnboardingEnabled: prepared.centralOnboardingEnabled,
    redirectPairId: prepared.redirectPairId,
    callbackUrl: prepared.callbackUrl,
    returnTo: prepared.returnTo,
    createdAt,
    expiresAt: createdAt + deps.settings.transactionTtlSeconds * 1000,
    consumedAt: null,
    userId: null,
    sessionId: null,
  };
}

// --- Callback (spec 4.2): consume → token → user → onboarding → session and handoff -----------

/**
 * Spec 4.2, counted in `gateway.signin.outcomes`: `handoff`, `onboarding_global`,
 * `onboarding_platform`, or the error code of a failed callback.
 */
async function completeLogin(deps: LoginDeps, request: CallbackRequest) {
  const attempt: SignInAttempt = {};
  try {
    const answer = await runCallback(deps, request, attempt);
    gatewayMetrics.recordSignInOutcome(answer.outcome);
    return {
      redirectUrl: answer.redirectUrl,
      sessionToken: answer.sessionToken,
      sessionExpiresAt: answer.sessionExpiresAt,
    };
  } catch (error) {
    const code = error instanceof GatewayError ? error.code : 'INTERNAL_ERROR';
    gatewayMetrics.recordSignInOutcome(code);
    // Only a callback whose state named a transaction is recorded: unknown states are free
    // to send and would let anyone fill the audit log.
    if (attempt.platformKey !== undefined) await deps.audit.signInRefused(attempt, code);
    throw error;
  }
}

async function runCallback(deps: LoginDeps, request: CallbackRequest, attempt: SignInAttempt) {
  const at = deps.now();
  if (request.identityError !== undefined) {
    return endRefusedLogin(deps, request.state, request.identityError, at, attempt);
  }
  const { transaction, client } = await consumeTransaction(deps, request.state, at, attempt);
  const { idToken, verified } = await verifiedIdentity(deps, transaction, client, request);
  const { user, admin } = await provisionLoginUser(deps, client, verified, at);
  attempt.userId = user.id;
  // Step 6: membership bootstrap and onboarding evaluation, before anything is written, so
  // that steps 7 and 8 are one atomic store write. The same call applies spec 2.5's claims
  // (an HTTPS picture fills an empty avatar, the name an unset display name).
  const next = await nextStep(deps, transaction, user.id, client.issuer, {
    ...(verified.picture === undefined ? {} : { picture: verified.picture }),
    ...(verified.name === undefined ? {} : { name: verified.name }),
  });
  const { session, sessionToken } = newSession(deps, {
    transaction,
    client,
    user,
    admin,
    idToken,
    identitySessionId: verified.identitySessionId ?? null,
    at,
  });
  // Step 8: the handoff, when no onboarding step comes first.
  let handoff: HandoffRecord | undefined;
  let redirectUrl: string;
  if (next.outcome === 'handoff') {
    const snapshot = handoffSnapshotOf({
      transaction,
      user,
      client,
      evaluation: next.evaluation,
      canCompleteCentrally: transaction.centralOnboardingEnabled,
    });
    const issued = newHandoff(deps, transaction, session, sessionToken, snapshot);
    handoff = issued.record;
    redirectUrl = callbackWithCode(transaction, issued.code);
  } else {
    redirectUrl = next.redirectUrl;
  }
  await writeCallback(deps, { transaction, session, handoff, at });
  await deps.audit.signInSucceeded({
    userId: user.id,
    sessionId: session.id,
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

/**
 * Spec 4.2, 7: the provider answered with an `error` instead of a code. The login the state
 * names is consumed as by any callback, so its state cannot be replayed, and is refused like
 * any failed callback; the answer is the provider error's 400 whether or not the state named
 * a live login.
 */
async function endRefusedLogin(
  deps: LoginDeps,
  state: string,
  identityError: string,
  at: Date,
  attempt: SignInAttempt,
): Promise<never> {
  const transaction = await consumeByState(deps, state, at);
  if (transaction !== undefined) noteTransaction(attempt, transaction);
  throw authorizationErrorRefusal(identityError);
}

/** What a refusal's record names once the state named a transaction. */
function noteTransaction(attempt: SignInAttempt, transaction: TransactionRecord): void {
  attempt.platformId = transaction.platformId;
  attempt.platformKey = transaction.platformKey;
  attempt.environmentKey = transaction.environmentKey;
}

/** Spec 3.1: the transaction the state names, consumed once; undefined for any other state. */
async function consumeByState(
  deps: LoginDeps,
  state: string,
  at: Date,
): Promise<TransactionRecord | undefined> {
  const key = transactionKeyOf(state);
  return key === undefined ? undefined : deps.store.consumeTransaction(key, at.getTime());
}

/** Steps 1 and 2: the transaction, consumed once, and its environment captured at start. */
async function consumeTransaction(
  deps: LoginDeps,
  state: string,
  at: Date,
  attempt: SignInAttempt,
): Promise<{ transaction: TransactionRecord; client: Client }> {
  const transaction = await consumeByState(deps, state, at);
  if (transaction === undefined) {
    throw new GatewayError('NOT_FOUND', 'The login is unknown, expired or already used.');
  }
  noteTransaction(attempt, transaction);
  // The environment captured at start, never the platform's current binding.
  const client = await deps.environments.get(transaction.environmentKey);
  if (!client.active) {
    throw new GatewayError(
      'IDENTITY_ENVIRONMENT_INACTIVE',
      'The identity environment is inactive.',
    );
  }
  return { transaction, client };
}

/** Steps 2 and 3: the code exchanged for an ID token, verified and bound to the nonce. */
async function verifiedIdentity(
  deps: LoginDeps,
  transaction: TransactionRecord,
  client: Client,
  request: CallbackRequest,
): Promise<{ idToken: string; verified: VerifiedIdToken }> {
  const document = await deps.discovery.get(client.issuer);
  // RFC 9207: before the code goes anywhere, the response must come from this issuer.
  checkAuthorizationResponseIssuer(document, client.issuer, request.iss);
  const verifier = deps.keyring.decryptString(
    transaction.pkceVerifierEncrypted,
    `pkce:${transaction.id}`,
  );
  const idToken = await exchangeAuthorizationCode(document, client, {
    code: request.code,
    redirectUri: deps.settings.callbackUrl,
    codeVerifier: verifier,
    timeoutMs: deps.settings.identityTimeoutMs,
  });
  const verified = await verifyIdToken(idToken, document, client, deps.jwks);
  if (!verifyTokenAgainstHash(verified.nonce, transaction.nonceHash)) {
    throw new GatewayError('NONCE_MISMATCH', 'The ID token nonce does not match the login.');
  }
  return { idToken, verified };
}

/** Steps 4 and 5: the user (one statement, which also answers the role) and the bootstrap. */
async function provisionLoginUser(
  deps: LoginDeps,
  client: Client,
  verified: VerifiedIdToken,
  at: Date,
): Promise<{ user: UserRow; admin: boolean }> {
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
  const bootstrapped = await bootstrapAdmin(deps, client, verified, user, at);
  return { user, admin: platformAdmin || bootstrapped };
}

/**
 * Step 5: the bootstrap list only grants, and only for verified deployment logins. True when
 * the user holds the role by it (granted now or before).
 */
async function bootstrapAdmin(
  deps: LoginDeps,
  client: Client,
  verified: VerifiedIdToken,
  user: UserRow,
  at: Date,
): Promise<boolean> {
  const email = verified.email?.toLowerCase();
  if (
    !client.deployment ||
    !verified.emailVerified ||
    email === undefined ||
    !deps.settings.bootstrapEmails.includes(email)
  ) {
    return false;
  }
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
  return true;
}

/**
 * Step 7: the session, with the permission snapshot (spec 2.6), what introspection answers
 * (spec 4.5), the sealed ID token and its `sid` (for back-channel logout).
 */
function newSession(
  deps: LoginDeps,
  parts: {
    transaction: TransactionRecord;
    client: Client;
    user: UserRow;
    admin: boolean;
    idToken: string;
    identitySessionId: string | null;
    at: Date;
  },
): { session: SessionRecord; sessionToken: string } {
  const { transaction, client, user, at } = parts;
  const sessionToken = taggedToken(slotTagOf(transaction.id));
  const id = randomUUID();
  const snapshot = {
    issuer: user.issuer,
    subject: user.subject,
    email: user.email,
    emailVerified: user.email_verified,
    environmentTier: client.tier,
  };
  const session: SessionRecord = {
    id,
    tokenHash: hashCredential(sessionToken),
    userId: user.id,
    environmentKey: client.environmentKey,
    platformKey: transaction.platformKey,
    permissions: permissionsOf(parts.admin, client.deployment),
    idTokenEncrypted: sealIdToken(deps.keyring, parts.idToken, { id, snapshot }),
    identitySessionId: parts.identitySessionId,
    snapshot,
    createdAt: at.getTime(),
    expiresAt: at.getTime() + deps.settings.sessionTtlSeconds * 1000,
  };
  return { session, sessionToken };
}

/** Steps 4, 7 and 8 written in one atomic step: the binding, the session and the handoff. */
async function writeCallback(
  deps: LoginDeps,
  write: {
    transaction: TransactionRecord;
    session: SessionRecord;
    handoff: HandoffRecord | undefined;
    at: Date;
  },
): Promise<void> {
  const { handoff } = write;
  const written = await deps.store.createBoundSession({
    transactionId: write.transaction.id,
    keepUntil: write.at.getTime() + RESUME_WINDOW_MS,
    session: write.session,
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
}

// --- Resume (spec 4.3): the bound login, onboarding again, then the handoff ------------------

async function resumeLogin(deps: LoginDeps, request: ResumeRequest): Promise<string> {
  const { transaction, session, userId } = await boundTransaction(deps, request);
  const { platform } = await deps.registry.getPlatform({ platformKey: transaction.platformKey });
  if (platform?.active !== true) {
    throw new GatewayError('NOT_FOUND', 'Unknown or inactive platform.');
  }
  const client = await deps.environments.get(transaction.environmentKey);
  const next = await nextStep(deps, transaction, userId, client.issuer);
  if (next.outcome !== 'handoff') return next.redirectUrl;
  // Spec 4.4: what the exchange will answer, as it stands now.
  const user = await findUser(deps.db.knex, userId);
  if (user === undefined) throw new GatewayError('NOT_FOUND', 'The login is unknown or expired.');
  const snapshot = handoffSnapshotOf({
    transaction,
    user,
    client,
    evaluation: next.evaluation,
    canCompleteCentrally: platform.centralOnboardingEnabled,
  });
  const { code, record } = newHandoff(deps, transaction, session, request.sessionToken, snapshot);
  if ((await deps.store.issueHandoff(record)) === 'conflict') {
    throw new GatewayError('CONFLICT', 'A handoff was already issued for this login.');
  }
  return callbackWithCode(transaction, code);
}

/** The login the session's user completed the callback of, in the session's environment. */
async function boundTransaction(
  deps: LoginDeps,
  request: ResumeRequest,
): Promise<{ transaction: TransactionRecord; session: SessionRecord; userId: string }> {
  const at = deps.now().getTime();
  const session = await deps.store.getSession(hashCredential(request.sessionToken), at);
  if (session === undefined) throw new GatewayError('UNAUTHORIZED', 'Sign in first.');
  const transaction = await deps.store.getTransaction(request.transactionId);
  if (transaction === undefined || transaction.consumedAt === null || transaction.userId === null) {
    throw new GatewayError('NOT_FOUND', 'The login is unknown or expired.');
  }
  if (session.environmentKey !== transaction.environmentKey) {
    throw new GatewayError('UNAUTHORIZED', 'The session belongs to another identity environment.');
  }
  if (session.userId !== transaction.userId) {
    throw new GatewayError('FORBIDDEN', 'The login belongs to another user.');
  }
  return { transaction, session, userId: transaction.userId };
}

// --- Shared steps ------------------------------------------------------------------------------

/**
 * Spec 4.2 steps 6 and 8, 4.3: onboarding is evaluated on the server every time, through the
 * membership bootstrap (created NOT_STARTED, recorded COMPLETE when nothing required is
 * missing, spec 3.7). A missing required global field sends the browser to the global step in
 * every mode; in central mode a missing platform field to the platform step; otherwise the
 * handoff is issued, with this evaluation as its onboarding answer. A callback passes the ID
 * token's claims, applied to the profile in the same call.
 */
async function nextStep(
  deps: LoginDeps,
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

/**
 * Spec 2.9: a handoff code, stored as a hash, single use, at most one per transaction. It
 * carries what the exchange answers (spec 4.4) and names its session; the code carries the
 * session's lookup key and sits in the session's slot (slot-tags.ts), so the exchange is one
 * atomic redeem in one round trip: no other read.
 */
function newHandoff(
  deps: LoginDeps,
  transaction: TransactionRecord,
  session: Pick<SessionRecord, 'id' | 'userId' | 'tokenHash'>,
  sessionToken: string,
  snapshot: HandoffSnapshot,
): { code: string; record: HandoffRecord } {
  const code = newHandoffCode(session.tokenHash, slotTagOf(transaction.id));
  const codeHash = hashCredential(code);
  const createdAt = deps.now().getTime();
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
      sessionTokenEncrypted: deps.keyring.encrypt(sessionToken, `handoff:${codeHash}`),
      sessionTokenHash: session.tokenHash,
      snapshot,
      createdAt,
      expiresAt: createdAt + deps.settings.handoffTtlSeconds * 1000,
    },
  };
}

function callbackWithCode(transaction: TransactionRecord, code: string): string {
  const callback = new URL(transaction.callbackUrl);
  callback.searchParams.set('code', code);
  return callback.href;
}
