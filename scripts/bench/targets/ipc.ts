import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Tells the bench (the parent process) that this target listens, and on which port. */
export function reportReady(details: Record<string, unknown>): void {
  if (process.send === undefined) {
    process.stdout.write(`${JSON.stringify(details)}\n`);
    return;
  }
  process.send(details);
}

export function portOf(server: Server): number {
  return (server.address() as AddressInfo).port;
}

/** Stops on SIGTERM / SIGINT after `close`, exiting 0 (so --cpu-prof can write its file). */
export function exitOnSignals(close: () => Promise<void>): void {
  const stop = () => {
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // The bench going away closes the IPC channel: do not outlive it.
  process.once('disconnect', stop);
}
