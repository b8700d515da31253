import type { MessageInitShape } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import { implementationOf, type ServiceImplementation } from '@gateway/rpc';
import {
  AuthFlowService,
  type CompleteLoginResponseSchema,
  type ExchangeHandoffResponseSchema,
  type IntrospectSessionResponseSchema,
} from '@gateway/contracts';
import type { GatewayError } from '@gateway/errors';

// A stand-in AuthFlowService for the edge's tests, called in process as the all-in-one calls
// a service, with the services' real interceptors. The real auth-flow service is being written in
// parallel; this fake answers with fixed, fully populated messages (each replaceable per
// test) and records every call, so the edge's part of the login flow (validation, Basic
// and cookie authentication, Origin checks, cookies, redirects and response mapping) can be
// tested over real HTTP now. End-to-end tests against the real service live with the
// all-in-one gateway.

type Impl = ServiceImpl<typeof AuthFlowService>;
export type AuthFlowMethod = keyof Impl;

export const AUTHORIZE_URL =
  'https://id.example.test/oauth2/authorize?client_id=gateway&state=s1&nonce=n1';
export const PLATFORM_CALLBACK_REDIRECT =
  'https://shop.example.test/auth/callback?code=handoff_abc123';
export const SESSION_TOKEN = 'gst_token/with+chars=';
export const SESSION_ID = '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e';
export const USER_ID = '2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f';
export const LOGOUT_URL = 'https://id.example.test/oauth2/logout?state=x';
export const LOGGED_OUT_REDIRECT = 'https://shop.example.test/';

export function sampleCompleteLogin(
  expiresAt: string,
): MessageInitShape<typeof CompleteLoginResponseSchema> {
  return {
    redirectUrl: PLATFORM_CALLBACK_REDIRECT,
    sessionToken: SESSION_TOKEN,
    sessionExpiresAt: expiresAt,
  };
}

export function sampleExchange(): MessageInitShape<typeof ExchangeHandoffResponseSchema> {
  return {
    session: { id: SESSION_ID, expiresAt: '2030-01-01T00:00:00.000Z', gatewayToken: 'gst_x' },
    user: {
      id: USER_ID,
      sub: 'user-sub-1',
      issuer: 'https://id.example.test',
      picture: 'https://id.example.test/p.png',
    },
    platformKey: 'SHOP',
    environment: { key: 'PROD', tier: 'production' },
    onboarding: {
      status: 'IN_PROGRESS',
      requirementVersion: 3,
      missingFields: ['company'],
      canCompleteCentrally: false,
    },
    profile: { status: 'COMPLETE', missingFields: [] },
    permissions: ['platforms:admin'],
    returnTo: 'https://shop.example.test/cart',
  };
}

export function sampleIntrospection(): MessageInitShape<typeof IntrospectSessionResponseSchema> {
  return {
    active: true,
    sessionId: SESSION_ID,
    expiresAt: '2030-01-01T00:00:00.000Z',
    platformKey: 'SHOP',
    user: {
      id: USER_ID,
      issuer: 'https://id.example.test',
      subject: 'user-sub-1',
      email: 'ada@example.test',
      emailVerified: true,
      status: 'active',
    },
    environment: { key: 'PROD', tier: 'production' },
  };
}

export type FakeAuthFlow = {
  implementation: ServiceImplementation;
  /** Every call in order: the method's local name and the request message. */
  calls: { method: AuthFlowMethod; request: Record<string, unknown> }[];
  /** Calls of one method, oldest first. */
  requestsOf(method: AuthFlowMethod): Record<string, unknown>[];
  /** What the next answers carry (reset() restores the samples). */
  answers: {
    completeLogin: MessageInitShape<typeof CompleteLoginResponseSchema>;
    exchangeHandoff: MessageInitShape<typeof ExchangeHandoffResponseSchema>;
    introspectSession: MessageInitShape<typeof IntrospectSessionResponseSchema>;
    logoutUrl: string | undefined;
  };
  /** The next call (of any method) fails with this error, after it was recorded. */
  failNextWith(error: GatewayError): void;
  /**
   * Introspections answer only once this settles (recorded at once): a request held in
   * flight for as long as a test needs it.
   */
  introspectionsWaitFor: Promise<void> | undefined;
  reset(): void;
};

/** One hour from now: a session expiry the cookie's Max-Age is computed from. */
export function inOneHour(): string {
  return new Date(Date.now() + 3600_000).toISOString();
}

export function createFakeAuthFlow(): FakeAuthFlow {
  const calls: FakeAuthFlow['calls'] = [];
  let failure: GatewayError | undefined;
  const samples = (): FakeAuthFlow['answers'] => ({
    completeLogin: sampleCompleteLogin(inOneHour()),
    exchangeHandoff: sampleExchange(),
    introspectSession: sampleIntrospection(),
    logoutUrl: LOGOUT_URL,
  });
  const fake: FakeAuthFlow = {
    calls,
    requestsOf: (method) => calls.filter((call) => call.method === method).map((c) => c.request),
    answers: samples(),
    introspectionsWaitFor: undefined,
    failNextWith(error) {
      failure = error;
    },
    reset() {
      calls.length = 0;
      failure = undefined;
      fake.answers = samples();
      fake.introspectionsWaitFor = undefined;
    },
    get implementation() {
      return implementationOf(AuthFlowService, implementation);
    },
  };

  const record = (method: AuthFlowMethod, request: object) => {
    calls.push({ method, request: request as Record<string, unknown> });
    if (failure !== undefined) {
      const error = failure;
      failure = undefined;
      throw error;
    }
  };

  const implementation: Impl = {
    startLogin(request) {
      record('startLogin', request);
      return { authorizeUrl: AUTHORIZE_URL, transactionId: '00000000-0000-4000-8000-000000000001' };
    },
    completeLogin(request) {
      record('completeLogin', request);
      return fake.answers.completeLogin;
    },
    resumeLogin(request) {
      record('resumeLogin', request);
      return { redirectUrl: PLATFORM_CALLBACK_REDIRECT };
    },
    exchangeHandoff(request) {
      record('exchangeHandoff', request);
      return fake.answers.exchangeHandoff;
    },
    async introspectSession(request) {
      record('introspectSession', request);
      await fake.introspectionsWaitFor;
      return fake.answers.introspectSession;
    },
    logout(request) {
      record('logout', request);
      return { logoutUrl: request.sessionToken === undefined ? undefined : fake.answers.logoutUrl };
    },
    completeLogout(request) {
      record('completeLogout', request);
      return { redirectUrl: LOGGED_OUT_REDIRECT };
    },
    backchannelLogout(request) {
      record('backchannelLogout', request);
      return { revokedGatewaySessions: 1 };
    },
    provisionTokenUser(request) {
      record('provisionTokenUser', request);
      // Roles arrive through the real auth-flow service; the stand-in grants none.
      return { userId: '00000000-0000-4000-8000-0000000000aa', permissions: [] };
    },
    // User admin (spec 4.12) is tested end to end against the real service (all-in-one).
    listUsers(request) {
      record('listUsers', request);
      return { items: [], total: 0, page: request.page, pageSize: request.pageSize };
    },
    grantPlatformAdmin(request) {
      record('grantPlatformAdmin', request);
      return {};
    },
    revokePlatformAdmin(request) {
      record('revokePlatformAdmin', request);
      return {};
    },
    revokeUserSessions(request) {
      record('revokeUserSessions', request);
      return { revokedGatewaySessions: 0, identitySessionsRevoked: true };
    },
    // The account routes (spec 4.8) are tested end to end against the real service.
    authenticateSession(request) {
      record('authenticateSession', request);
      return { userId: USER_ID, sessionId: SESSION_ID, environmentKey: 'PROD', permissions: [] };
    },
    getAccount(request) {
      record('getAccount', request);
      return {
        account: {
          id: request.userId,
          issuer: 'https://id.example.test',
          subject: 'user-sub-1',
          environment: { key: 'PROD', tier: 'production' },
          email: 'ada@example.test',
          emailVerified: true,
          status: 'ACTIVE',
          accountManagementUrl: 'https://id.example.test/account',
        },
      };
    },
    deleteAccount(request) {
      record('deleteAccount', request);
      return { revokedGatewaySessions: 1, identityAccountSuspended: true };
    },
    // The sessions routes are tested end to end against the real service (all-in-one).
    listAccountSessions(request) {
      record('listAccountSessions', request);
      return { items: [] };
    },
    revokeAccountSession(request) {
      record('revokeAccountSession', request);
      return {};
    },
    revokeOtherAccountSessions(request) {
      record('revokeOtherAccountSessions', request);
      return { revokedSessions: 0 };
    },
    listUserSessions(request) {
      record('listUserSessions', request);
      return { items: [] };
    },
    revokeUserSession(request) {
      record('revokeUserSession', request);
      return {};
    },
  };
  return fake;
}
