import type { Client, ConnectError } from '@connectrpc/connect';
import type {
  AuthFlowService,
  CallError,
  LoginBatchService,
  SessionIntrospectionService,
} from '@gateway/contracts';
import { callsTogether, itemError } from '@gateway/rpc';

type AuthFlowClient = Client<typeof AuthFlowService>;

/**
 * The auth-flow client of the edge in split mode: the introspections, starts and exchanges made
 * in one turn of its event loop go to auth-flow together, as one IntrospectSessions,
 * StartLogins or ExchangeHandoffs call (callsTogether). Every other method is `authFlow`'s.
 */
export function authFlowCallsTogether(
  authFlow: AuthFlowClient,
  sessions: Client<typeof SessionIntrospectionService>,
  logins: Client<typeof LoginBatchService>,
): AuthFlowClient {
  return {
    ...authFlow,
    // An IntrospectSessions call fails as a whole when any introspection fails.
    introspectSession: callsTogether(authFlow.introspectSession, async (requests) => {
      return (await sessions.introspectSessions({ sessions: requests })).sessions;
    }),
    startLogin: callsTogether(authFlow.startLogin, async (requests) => {
      return (await logins.startLogins({ logins: requests })).logins.map(({ outcome }) =>
        outcomeOf(outcome),
      );
    }),
    exchangeHandoff: callsTogether(authFlow.exchangeHandoff, async (requests) => {
      return (await logins.exchangeHandoffs({ exchanges: requests })).exchanges.map(({ outcome }) =>
        outcomeOf(outcome),
      );
    }),
  };
}

/** An item's answer, or the ConnectError its own call would have failed with. */
function outcomeOf<A>(
  outcome:
    | { case: 'answer'; value: A }
    | { case: 'error'; value: CallError }
    | { case: undefined; value?: undefined },
): A | ConnectError {
  return outcome.case === 'answer' ? outcome.value : itemError(outcome.value);
}
