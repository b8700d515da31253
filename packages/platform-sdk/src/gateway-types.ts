// The bodies the gateway answers to a platform backend, as the SDK hands them on. Their
// shapes are checked on arrival (gateway-answers.ts); fields added by later gateway versions
// are kept (spec 9: clients must tolerate unknown fields).

/** Tier of an identity environment (spec 2.4). */
export type EnvironmentTier = 'development' | 'staging' | 'production';

/** Spec 2.14, 4.4. `IN_PROGRESS` always comes with non-empty `missingFields`. */
export type OnboardingStatus = 'NOT_STARTED' | 'IN_PROGRESS' | 'COMPLETE';

/** The 200 body of `POST /v1/auth/exchange` (spec 4.4). */
export type ExchangeResult = {
  session: {
    /** uuid of the gateway session. */
    id: string;
    /** ISO 8601 date-time. */
    expiresAt: string;
    /** Opaque credential: keep it server-side only, never send it to the browser. */
    gatewayToken: string;
  };
  user: {
    /** uuid of the local user; key platform-side user mappings on it or on (issuer, sub). */
    id: string;
    /** Unique only together with `issuer`. */
    sub: string;
    issuer: string;
    /** Present only when known. */
    picture?: string;
  };
  platform: { key: string };
  /** The environment the user signed in through; checked against expectedEnvironment. */
  environment: { key: string; tier: EnvironmentTier };
  onboarding: {
    status: OnboardingStatus;
    requirementVersion: number;
    missingFields: string[];
    /** From the platform's `centralOnboardingEnabled`. */
    canCompleteCentrally: boolean;
  };
  profile: {
    /** Always `COMPLETE` in a handoff. */
    status: string;
    missingFields: string[];
  };
  /** Permission snapshot; empty outside the deployment environment. */
  permissions: string[];
  /** Server-validated absolute URL captured at start: where the user wanted to go. */
  returnTo: string;
};

/** The `active: true` body of `POST /v1/auth/introspect` (spec 4.5), without `active`. */
export type IntrospectedSession = {
  sessionId: string;
  /** ISO 8601 date-time; the SDK never caches the answer beyond it. */
  expiresAt: string;
  platformKey: string;
  user: {
    id: string;
    issuer: string;
    subject: string;
    /** null when the identity has no e-mail address. */
    email: string | null;
    emailVerified: boolean;
    status: string;
  };
  environment: { key: string; tier: EnvironmentTier };
};

/**
 * What introspect tells the platform:
 * - `active`: a live session created by this platform's login;
 * - `inactive`: unknown, expired, revoked or logged-out token, a blocked user, or another
 *   platform's session: sign the user out of the platform;
 * - `unavailable`: the gateway failed (5xx) or did not answer in time: answer 503 and keep
 *   the user signed in (spec 4.5).
 */
export type IntrospectionResult =
  | { state: 'active'; session: IntrospectedSession }
  | { state: 'inactive' }
  | { state: 'unavailable' };

/** The 200 body of `POST /v1/auth/logout` (spec 4.6). */
export type LogoutResult = {
  /**
   * The identity end-session URL to send the browser to, or null (no live session, or the
   * environment has no end-session endpoint): then send it to the platform's own page.
   */
  logoutUrl: string | null;
};

/**
 * One live session of the signed-in user, as `GET /v1/account/sessions` lists it (newest
 * first): on every platform and in the account's own pages, not only this platform's.
 */
export type AccountSession = {
  /** uuid of the gateway session. */
  id: string;
  /** The platform whose sign-in created the session; null for one no platform started. */
  platform: { key: string; name: string } | null;
  /** The environment the user signed in through. */
  environment: { key: string; tier: EnvironmentTier };
  /** ISO 8601 date-times. */
  createdAt: string;
  expiresAt: string;
  /** The session of the gatewayToken the list was asked with. */
  current: boolean;
};

/** The 200 body of `DELETE /v1/account/sessions?except=current`. */
export type EndOtherSessionsResult = {
  /** How many of the user's other sessions ended. */
  revokedSessions: number;
};
