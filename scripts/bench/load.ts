import autocannon from 'autocannon';

export type LoadRequest = autocannon.Request;

export type LoadSpec = {
  url: string;
  connections: number;
  /** Seconds of load; ignored when `amount` is given. */
  durationSeconds?: number;
  /** Stop after this many responses. */
  amount?: number;
  requests: LoadRequest[];
  /** Answers with another status count as errors. */
  expectedStatuses: number[];
};

export type LoadResult = {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Socket errors, timeouts and answers with an unexpected status. */
  errors: number;
  requests: number;
  durationSeconds: number;
  statusCounts: Record<string, number>;
  socketErrors: number;
  timeouts: number;
};

/**
 * One autocannon run (as a library, in the bench's own process): keep-alive connections,
 * one request in flight per connection (no pipelining).
 */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  // A run of `amount` requests ends at autocannon's next one-second tick, so its own duration
  // is at least a second however fast the answers came: time the first request to the last
  // answer here instead.
  const startedAt = performance.now();
  let lastAnswerAt = startedAt;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        pipelining: 1,
        timeout: 10,
        ...(spec.amount === undefined
          ? { duration: spec.durationSeconds ?? 10 }
          : { amount: spec.amount, duration: 3600 }),
        requests: spec.requests,
      },
      (error, answer) => (error === null ? resolve(answer) : reject(error)),
    );
    instance.on('response', () => {
      lastAnswerAt = performance.now();
    });
  });
  const seconds =
    spec.amount === undefined ? result.duration : Math.max(lastAnswerAt - startedAt, 1) / 1000;
  const statusCounts: Record<string, number> = {};
  let unexpected = 0;
  for (const [status, stat] of Object.entries(result.statusCodeStats ?? {})) {
    const count = Number((stat as { count: number | string }).count);
    statusCounts[status] = count;
    if (!spec.expectedStatuses.includes(Number(status))) unexpected += count;
  }
  const total = result.requests.total;
  return {
    rps: seconds > 0 ? total / seconds : 0,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + unexpected,
    requests: total,
    durationSeconds: Math.round(seconds * 1000) / 1000,
    statusCounts,
    socketErrors: result.errors - result.timeouts,
    timeouts: result.timeouts,
  };
}
