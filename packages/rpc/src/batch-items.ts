import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { CallErrorSchema, GatewayErrorDetailSchema, type CallError } from '@gateway/contracts';
import { serviceErrorOf } from '@gateway/errors';

/** One item's outcome in a batch answer (a `oneof outcome { answer; error }` in the proto). */
export type ItemOutcome<A> =
  { case: 'answer'; value: A } | { case: 'error'; value: MessageInitShape<typeof CallErrorSchema> };

/**
 * The items of a batch call, each done by `work` concurrently, each with its own outcome in the
 * order of `items`: its answer, or the error its own call would fail with (the services' error
 * boundary, serviceErrorOf: an unexpected failure is reported to `onUnexpected` under
 * `procedure`, the method the item stands for). One failing item leaves the others theirs.
 */
export function settleEach<I, A>(
  items: readonly I[],
  work: (item: I) => Promise<A>,
  procedure: string,
  onUnexpected: (error: unknown, procedure: string) => void,
): Promise<{ outcome: ItemOutcome<A> }[]> {
  return Promise.all(
    items.map((item) =>
      work(item).then(
        (answer): { outcome: ItemOutcome<A> } => ({ outcome: { case: 'answer', value: answer } }),
        (error: unknown): { outcome: ItemOutcome<A> } => ({
          outcome: {
            case: 'error',
            value: callErrorOf(serviceErrorOf(error, procedure, onUnexpected)),
          },
        }),
      ),
    ),
  );
}

function callErrorOf(error: ConnectError): MessageInitShape<typeof CallErrorSchema> {
  const [detail] = error.findDetails(GatewayErrorDetailSchema);
  return {
    code: error.code,
    message: error.rawMessage,
    ...(detail === undefined ? {} : { detail }),
  };
}

/**
 * On the caller's side, the ConnectError an item's own call would have failed with, so that
 * fromConnectError answers it alike. A code this version does not know is Internal.
 */
export function itemError(error: CallError = create(CallErrorSchema)): ConnectError {
  const code = error.code in Code && error.code > 0 ? (error.code as Code) : Code.Internal;
  const details =
    error.detail === undefined ? [] : [{ desc: GatewayErrorDetailSchema, value: error.detail }];
  return new ConnectError(error.message, code, undefined, details);
}
