import type { HandlerContext } from '@connectrpc/connect';

/**
 * When the caller of the call being served stops waiting, in epoch milliseconds of this
 * process's clock; undefined when it set no deadline. Connect carries a deadline as the time
 * left, so this is that time from now. Work that must not happen once the caller has given up
 * (a code spent after its exchange already answered 503) takes it along.
 */
export function callerDeadline(context: Pick<HandlerContext, 'timeoutMs'>): number | undefined {
  const left = context.timeoutMs();
  return left === undefined ? undefined : Date.now() + left;
}
