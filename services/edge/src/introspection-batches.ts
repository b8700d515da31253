import type { CallOptions, Client } from '@connectrpc/connect';
import type {
  AuthFlowService,
  IntrospectSessionRequest,
  IntrospectSessionResponse,
  SessionIntrospectionService,
} from '@gateway/contracts';
import { activeTraceFields } from '@gateway/telemetry';

type AuthFlowClient = Client<typeof AuthFlowService>;
type Introspection = Parameters<AuthFlowClient['introspectSession']>[0];
type Waiting = {
  request: Introspection;
  resolve: (answer: IntrospectSessionResponse) => void;
  reject: (error: unknown) => void;
};

/** The most introspections one IntrospectSessions call carries; more of a turn take several. */
const MAX_SESSIONS = 128;

/**
 * The auth-flow client of the edge in split mode, whose introspections made in one turn of the
 * event loop go to auth-flow together, as one SessionIntrospectionService.IntrospectSessions
 * call (per call, Connect over HTTP/2 costs more CPU than the introspection itself). A lone
 * introspection, one with call options of its own, and one inside a sampled trace (so that it
 * keeps its own span in its request's trace) go as IntrospectSession. Every other method is
 * `authFlow`'s. When the call fails, every introspection of it fails with its error.
 */
export function introspectingTogether(
  authFlow: AuthFlowClient,
  sessions: Client<typeof SessionIntrospectionService>,
): AuthFlowClient {
  let waiting: Waiting[] = [];
  const send = (batch: Waiting[]) => {
    const [only] = batch;
    if (batch.length === 1 && only !== undefined) {
      authFlow.introspectSession(only.request).then(only.resolve, only.reject);
      return;
    }
    sessions
      .introspectSessions({ sessions: batch.map((one) => one.request as IntrospectSessionRequest) })
      .then(
        (answer) => {
          batch.forEach((one, index) => {
            const session = answer.sessions[index];
            if (session === undefined) one.reject(new Error('auth-flow left an introspection out'));
            else one.resolve(session);
          });
        },
        (error: unknown) => batch.forEach((one) => one.reject(error)),
      );
  };
  const sendWaiting = () => {
    const batch = waiting;
    waiting = [];
    for (let start = 0; start < batch.length; start += MAX_SESSIONS) {
      send(batch.slice(start, start + MAX_SESSIONS));
    }
  };
  const introspectSession = (request: Introspection, options?: CallOptions) => {
    if (options !== undefined || activeTraceFields().trace_flags === '01') {
      return authFlow.introspectSession(request, options);
    }
    return new Promise<IntrospectSessionResponse>((resolve, reject) => {
      if (waiting.length === 0) setImmediate(sendWaiting);
      waiting.push({ request, resolve, reject });
    });
  };
  return { ...authFlow, introspectSession };
}
