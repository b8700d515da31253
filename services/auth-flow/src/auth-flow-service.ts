import type { ServiceImpl } from '@connectrpc/connect';
import {
  AuthFlowService,
  LoginBatchService,
  SessionIntrospectionService,
  type ProvisionTokenUserRequest,
} from '@gateway/contracts';
import {
  callerDeadline,
  createHealthImplementation,
  implementationOf,
  unexpectedErrorLog,
  type ReadinessProbe,
  type ServiceImplementation,
} from '@gateway/rpc';
import type { Logger } from '@gateway/telemetry';
import { createAccountService, type AccountService } from './account.js';
import type { AuthFlowDeps } from './auth-flow-deps.js';
import { createBackchannelLogout } from './backchannel-logout.js';
import { createEnvironmentClients } from './environment-clients.js';
import { createLoginFlow } from './login-flow.js';
import { createLoginBatches } from './login-batches.js';
import { createLogoutFlow } from './logout-flow.js';
import { createSessionHandoff } from './session-handoff.js';
import { createSessionIntrospection } from './session-introspection.js';
import { createUserAdmin, DEFAULT_PAGE_SIZE } from './user-admin.js';
import { createUserSessions } from './user-sessions.js';
import { permissionsOf, provisionUser } from './users.js';

export function createAuthFlowServiceImpl(deps: AuthFlowDeps): ServiceImpl<typeof AuthFlowService> {
  const environments = createEnvironmentClients(deps.registry);
  const login = createLoginFlow(deps, environments);
  const handoff = createSessionHandoff(deps);
  const logout = createLogoutFlow(deps, environments);
  const backchannel = createBackchannelLogout(deps, environments);
  const userAdmin = createUserAdmin(deps);
  const account = createAccountService(deps, environments);
  const sessions = createUserSessions(deps);
  return {
    startLogin: (request) =>
      login.startLogin({
        platformKey: request.platformKey,
        returnTo: request.returnTo,
        onboardingMode: request.onboardingMode,
        signUp: request.defaultScreen === 'up',
      }),
    completeLogin: (request) =>
      login.completeLogin({
        code: request.code,
        state: request.state,
        iss: request.iss,
        identityError: request.identityError,
      }),
    async resumeLogin(request) {
      return {
        redirectUrl: await login.resumeLogin({
          transactionId: request.transactionId,
          sessionToken: request.sessionToken,
        }),
      };
    },
    // The redeem takes the caller's deadline along: once the edge has answered 503, a late
    // redeem must leave the code for the platform's retry.
    exchangeHandoff: (request, context) =>
      handoff.exchange({
        code: request.code,
        platformKey: request.platformKey,
        callbackUrl: request.callbackUrl,
        deadline: callerDeadline(context),
      }),
    introspectSession: (request) =>
      handoff.introspect({ token: request.token, platformKey: request.platformKey }),
    async logout(request) {
      const answer = await logout.logout({
        sessionToken: request.sessionToken,
        returnTo: request.returnTo,
      });
      return answer.logoutUrl === null ? {} : { logoutUrl: answer.logoutUrl };
    },
    completeLogout: (request) => logout.completeLogout({ state: request.state }),
    backchannelLogout: (request) =>
      backchannel.logout({
        environmentKey: request.environmentKey,
        logoutToken: request.logoutToken,
      }),
    provisionTokenUser: (request) => provisionTokenUser(deps, request),
    // Spec 4.12.
    listUsers: (request) =>
      userAdmin.listUsers({
        search: request.search,
        page: request.page === 0 ? 1 : request.page,
        pageSize: request.pageSize === 0 ? DEFAULT_PAGE_SIZE : request.pageSize,
        environmentKey: request.environmentKey,
      }),
    async grantPlatformAdmin(request) {
      return { user: await userAdmin.grantPlatformAdmin(request.context, request.userId) };
    },
    async revokePlatformAdmin(request) {
      return { user: await userAdmin.revokePlatformAdmin(request.context, request.userId) };
    },
    revokeUserSessions: (request) => userAdmin.revokeUserSessions(request.context, request.userId),
    async listUserSessions(request) {
      return { items: await sessions.listUserSessions(request.userId) };
    },
    async revokeUserSession(request) {
      await sessions.revokeUserSession(request.context, request.userId, request.sessionId);
      return {};
    },
    // Spec 5 gatewayCookieAuth on user routes, 2.5 and 4.8.
    authenticateSession: (request) => account.authenticateSession(request.sessionToken),
    getAccount: (request) => accountWithLocalUser(account, request.userId),
    deleteAccount: (request) => account.deleteAccount(request.userId),
    // The user's own sessions.
    async listAccountSessions(request) {
      return { items: await sessions.listAccountSessions(request.userId) };
    },
    async revokeAccountSession(request) {
      await sessions.revokeAccountSession(request.userId, request.sessionId);
      return {};
    },
    async revokeOtherAccountSessions(request) {
      return {
        revokedSessions: await sessions.revokeOtherAccountSessions(
          request.userId,
          request.keepSessionId,
        ),
      };
    },
  };
}

/** Spec 2.5: found or created by (issuer, sub); blocked users are refused (403). */
async function provisionTokenUser(deps: AuthFlowDeps, request: ProvisionTokenUserRequest) {
  const { user, platformAdmin } = await provisionUser(
    deps.db.knex,
    {
      issuer: request.issuer,
      subject: request.subject,
      environmentKey: request.environmentKey,
      email: request.email,
      emailVerified: request.emailVerified,
      picture: undefined,
      name: undefined,
    },
    (deps.now ?? (() => new Date()))(),
  );
  return { userId: user.id, permissions: permissionsOf(platformAdmin, request.deployment) };
}

/** Spec 4.8 GET /v1/users/me: the account view and the local record behind it. */
async function accountWithLocalUser(account: AccountService, userId: string) {
  const [view, localUser] = await Promise.all([
    account.getAccount(userId),
    account.getLocalUser(userId),
  ]);
  return { account: view, localUser };
}

export type AuthFlowServiceOptions = {
  deps: AuthFlowDeps;
  probeTimeoutMs: number;
  /** The service's log: a failure of one item of a batch call is logged there. */
  logger: Logger;
};

/**
 * The auth-flow service, made once per process: AuthFlowService, SessionIntrospectionService
 * and LoginBatchService (the edge's introspections, starts and exchanges that reach it together
 * over the wire) and the gRPC health service.
 */
export function createAuthFlowImplementations(
  options: AuthFlowServiceOptions,
): ServiceImplementation[] {
  const { db, store } = options.deps;
  const probes: ReadinessProbe[] = [
    { name: 'postgres', check: () => db.ping(options.probeTimeoutMs) },
  ];
  if (store.kind === 'redis') probes.push({ name: 'redis', check: () => store.ping() });
  const authFlow = createAuthFlowServiceImpl(options.deps);
  return [
    implementationOf(AuthFlowService, authFlow),
    implementationOf(SessionIntrospectionService, createSessionIntrospection(authFlow)),
    implementationOf(
      LoginBatchService,
      createLoginBatches(authFlow, unexpectedErrorLog(options.logger)),
    ),
    createHealthImplementation({
      serviceName: AuthFlowService.typeName,
      probes,
      probeTimeoutMs: options.probeTimeoutMs,
    }),
  ];
}
