import { GatewayError } from '@gateway/errors';
import { gatewayMetrics } from '@gateway/telemetry';
import type { AuthFlowDeps } from './auth-flow-deps.js';
import { exchangeAnswerOf, type ExchangeAnswer } from './exchange-answer.js';
import { exercisablePermissions } from './platform-session-policy.js';
import type { SessionRecord } from './store/auth-flow-store.js';
import { isUserActive } from './user-status-watch.js';
import { userStatus } from './users.js';
import { handoffKeyOf, hashCredential } from './store/slot-tags.js';

export type SessionHandoff = ReturnType<typeof createSessionHandoff>;

/** What the exchange and introspection read: the store, the keyring and the registry. */
type HandoffDeps = Pick<
  AuthFlowDeps,
  'store' | 'keyring' | 'registry' | 'db' | 'userStatus' | 'settings'
> & {
  now: () => Date;
};

type ExchangeRequest = {
  code: string;
  platformKey: string;
  callbackUrl: string;
  /** When the caller stops waiting (epoch ms): the RPC's deadline; undefined when it has none. */
  deadline?: number | undefined;
};
type IntrospectRequest = { token: string; platformKey: string };

/** Spec 4.4 (exchange) and 4.5 (introspect): what a platform backend asks of a login. */
export function createSessionHandoff(deps: AuthFlowDeps) {
  const handoffDeps: HandoffDeps = { ...deps, now: deps.now ?? (() => new Date()) };
  return {
    exchange: (request: ExchangeRequest) => exchange(handoffDeps, request),
    introspect: (request: IntrospectRequest) => introspect(handoffDeps, request),
  };
}

const invalidCode = () => new GatewayError('NOT_FOUND', 'Invalid, expired or used handoff code.');

/** What a store time-out answers (the services' error interceptor): 503, to be retried. */
const tooLate = () =>
  new GatewayError('SERVICE_UNAVAILABLE', 'A gateway dependency is unavailable.');

/**
 * Redeems a handoff code, atomically single use (spec 2.9, 3.2, 4.4): an invalid, expired,
 * used or wrong-platform code answers 404, to every key, its own included. The code must have
 * been sent to the callback the presenting key serves (spec 4.4, 5: a key of one pair cannot
 * redeem codes of another); a code presented by the wrong key answers 404 and stays
 * redeemable by the right one. A 503 spends nothing (see redeem), so a platform may retry
 * after it. `permissions` are those the session can exercise (platform-session-policy.ts):
 * the session's snapshot.
 */
async function exchange(deps: HandoffDeps, request: ExchangeRequest): Promise<ExchangeAnswer> {
  try {
    const answer = await redeem(deps, request);
    const permissions = await exercisablePermissions(
      deps.registry,
      { platformKey: answer.platformKey, createdAt: undefined, permissions: answer.permissions },
      deps.settings,
    );
    if (permissions === undefined) throw invalidCode();
    gatewayMetrics.recordHandoffRedemption('redeemed');
    return { ...answer, permissions };
  } catch (error) {
    gatewayMetrics.recordHandoffRedemption('refused');
    throw error;
  }
}

/**
 * One atomic step: redeems the code and reads its session, refused when the session was
 * revoked or expired since issuance (spec 3.2, 3.3), or when the code was sent to another
 * platform or callback (which leaves it as it was). A redeem that reaches the store after the
 * caller's deadline changes nothing and answers 503 like a store time-out. The answer comes
 * from the handoff's snapshot and the live session, with no other read.
 */
async function redeem(deps: HandoffDeps, request: ExchangeRequest): Promise<ExchangeAnswer> {
  const handoff = await deps.store.redeemHandoff(
    handoffKeyOf(request.code),
    deps.now().getTime(),
    { platformKey: request.platformKey, callbackUrl: request.callbackUrl },
    request.deadline,
  );
  if (handoff === 'too_late') throw tooLate();
  if (handoff?.session === undefined) throw invalidCode();
  const { session } = handoff;
  const sessionToken = deps.keyring.decryptString(
    handoff.sessionTokenEncrypted,
    `handoff:${handoff.codeHash}`,
  );
  return exchangeAnswerOf({ ...handoff, session }, sessionToken);
}

/**
 * Spec 4.5: active only for a live session created by the caller's platform whose user is
 * active; everything else is the same `{ active: false }`.
 */
async function introspect(deps: HandoffDeps, request: IntrospectRequest) {
  const answer = await introspectToken(deps, request);
  gatewayMetrics.recordIntrospectResult(answer.active);
  return answer;
}

async function introspectToken(deps: HandoffDeps, request: IntrospectRequest) {
  const inactive = { active: false };
  const session = await deps.store.getSession(hashCredential(request.token), deps.now().getTime());
  if (session === undefined || session.platformKey !== request.platformKey) return inactive;
  // A deactivated or archived platform's sessions are ended (docs/decisions.md).
  if ((await exercisablePermissions(deps.registry, session, deps.settings)) === undefined) {
    return inactive;
  }
  // Spec 4.5: a suspended or deleted user's sessions are inactive at once. The status comes
  // from the user-status watch while it is live, with no query; otherwise it is read by
  // primary key.
  const active = await isUserActive(deps.userStatus, session.userId, () =>
    userStatus(deps.db.knex, session.userId),
  );
  return active ? activeIntrospection(session, request.platformKey) : inactive;
}

/**
 * The answer comes from the session record: the e-mail is the one of this session's login,
 * the tier the environment's then.
 */
function activeIntrospection(session: SessionRecord, platformKey: string) {
  const { snapshot } = session;
  return {
    active: true,
    sessionId: session.id,
    expiresAt: new Date(session.expiresAt).toISOString(),
    platformKey,
    user: {
      id: session.userId,
      issuer: snapshot.issuer,
      subject: snapshot.subject,
      email: snapshot.email,
      emailVerified: snapshot.emailVerified,
      status: 'ACTIVE',
    },
    environment: { key: session.environmentKey, tier: snapshot.environmentTier },
  };
}
