import type { ConnectRouter, ServiceImpl } from '@connectrpc/connect';
import { type AuthFlowService, SessionIntrospectionService } from '@gateway/contracts';

/**
 * SessionIntrospectionService (split mode): the sessions of one IntrospectSessions call,
 * each introspected by `authFlow` as its IntrospectSession does, concurrently.
 */
export function createSessionIntrospectionRoutes(
  authFlow: Pick<ServiceImpl<typeof AuthFlowService>, 'introspectSession'>,
): (router: ConnectRouter) => void {
  return (router) => {
    router.service(SessionIntrospectionService, {
      async introspectSessions(request, context) {
        const sessions = await Promise.all(
          request.sessions.map((session) => authFlow.introspectSession(session, context)),
        );
        return { sessions };
      },
    });
  };
}
