import type { ServiceImpl } from '@connectrpc/connect';
import type { AuthFlowService, SessionIntrospectionService } from '@gateway/contracts';

/**
 * SessionIntrospectionService: the sessions of one IntrospectSessions call, each introspected
 * by `authFlow` as its IntrospectSession does, concurrently.
 */
export function createSessionIntrospection(
  authFlow: Pick<ServiceImpl<typeof AuthFlowService>, 'introspectSession'>,
): ServiceImpl<typeof SessionIntrospectionService> {
  return {
    async introspectSessions(request, context) {
      const sessions = await Promise.all(
        request.sessions.map((session) => authFlow.introspectSession(session, context)),
      );
      return { sessions };
    },
  };
}
