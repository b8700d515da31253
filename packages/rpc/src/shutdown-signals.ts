/**
 * Runs `close` once on SIGTERM or SIGINT (Kubernetes, docker stop, Ctrl-C), then exits.
 * `close` should stop accepting work, let in-flight requests finish and close pools; when
 * it takes longer than `graceMs` the process exits anyway with status 1.
 */
export function closeOnShutdownSignals(options: {
  close: () => Promise<void>;
  onError: (error: unknown) => void;
  graceMs?: number;
}): void {
  let closing = false;
  const shutdown = (): void => {
    if (closing) return;
    closing = true;
    const timer = setTimeout(() => process.exit(1), options.graceMs ?? 10_000);
    timer.unref();
    options.close().then(
      () => process.exit(0),
      (error: unknown) => {
        options.onError(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
