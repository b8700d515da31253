import { Code, ConnectError, type CallOptions } from '@connectrpc/connect';
import { activeTraceFields } from '@gateway/telemetry';

/** The most items one batch call carries; more calls of a turn take several. */
export const MAX_ITEMS_PER_CALL = 128;

type Waiting<R, A> = { request: R; resolve: (answer: A) => void; reject: (error: unknown) => void };

/**
 * A unary method whose calls made in one turn of the event loop go to the service together,
 * as one call of its batch method (a repeated field in the proto): per call, Connect over
 * HTTP/2 costs more CPU than a start, an exchange or an introspection itself. `single` is the
 * method's own call, `together` the batch call, answering one outcome per request in their
 * order (an answer, or the error its own call would fail with). A lone call, one with call
 * options of its own and one inside a sampled trace (so that it keeps its own span in its
 * request's trace) go as `single`. When the batch call fails, each of its calls fails with its
 * error; a service that does not know the batch method (an older version, Unimplemented) gets
 * each call on its own.
 */
export function callsTogether<R, A>(
  single: (request: R, options?: CallOptions) => Promise<A>,
  together: (requests: R[]) => Promise<readonly (A | ConnectError)[]>,
): (request: R, options?: CallOptions) => Promise<A> {
  let waiting: Waiting<R, A>[] = [];
  const alone = (one: Waiting<R, A>) => void single(one.request).then(one.resolve, one.reject);
  const send = (batch: Waiting<R, A>[]) => {
    const [only] = batch;
    if (batch.length === 1 && only !== undefined) return alone(only);
    together(batch.map((one) => one.request)).then(
      (outcomes) =>
        batch.forEach((one, index) => {
          const outcome = outcomes[index];
          if (outcome === undefined) {
            one.reject(new ConnectError('the service left a call of the batch out', Code.Internal));
          } else if (outcome instanceof ConnectError) one.reject(outcome);
          else one.resolve(outcome);
        }),
      (error: unknown) => {
        if (ConnectError.from(error).code === Code.Unimplemented) batch.forEach(alone);
        else batch.forEach((one) => one.reject(error));
      },
    );
  };
  const sendWaiting = () => {
    const batch = waiting;
    waiting = [];
    for (let start = 0; start < batch.length; start += MAX_ITEMS_PER_CALL) {
      send(batch.slice(start, start + MAX_ITEMS_PER_CALL));
    }
  };
  return (request, options) => {
    if (options !== undefined || activeTraceFields().trace_flags === '01') {
      return single(request, options);
    }
    return new Promise<A>((resolve, reject) => {
      if (waiting.length === 0) setImmediate(sendWaiting);
      waiting.push({ request, resolve, reject });
    });
  };
}
