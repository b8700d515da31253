import { connect, type Socket } from 'node:net';
import type { LoadRequest } from './load.js';
import { percentile, round2 } from './report.js';

// S5's load generator. autocannon is closed-loop: each connection sends its next request when
// the previous one was answered, so a slower server is simply offered less. This one is
// open-loop (like wrk2 or k6's constant arrival rate): requests are due at the set rate
// whatever the answers do, each sent on an idle connection of a fixed pool of kept-alive ones,
// or, when none is idle, as soon as one frees (oldest first). One request in flight per
// connection, no pipelining.

export type OpenLoopSpec = {
  /** `http://host:port`; plain HTTP/1.1. */
  url: string;
  ratePerSecond: number;
  durationSeconds: number;
  /** Sent in turn. */
  requests: LoadRequest[];
  /**
   * The pool of kept-alive connections, opened and each used once before the clock starts, as
   * clients that were already talking to the server. It does not grow: opening connections
   * while the server is saturated would measure how late it accepts them. A connection lost
   * during the run is replaced.
   */
  connections: number;
  /** An answer not complete this long after its request was written counts as a time-out. */
  timeoutMs: number;
  expectedStatuses: number[];
};

export type OpenLoopResult = {
  /** Requests the schedule called for. */
  offered: number;
  answered: number;
  rps: number;
  /** From writing the request to the end of its answer. */
  p50Ms: number;
  p99Ms: number;
  /** From when the schedule called for the request, so a wait for a connection counts. */
  p99FromScheduleMs: number;
  /** p99 from writing of the answers other than 200: how fast refusals come. */
  refusalP99Ms: number;
  /** Requests not answered (lost connections, time-outs, never sent) and unexpected statuses. */
  errors: number;
  socketErrors: number;
  timeouts: number;
  statusCounts: Record<string, number>;
  /** The first body of each status other than 200. */
  bodies: Record<string, string>;
  /** Answers other than 200 without a `Retry-After` header. */
  withoutRetryAfter: number;
  durationSeconds: number;
};

type Pending = { scheduledAt: number; sentAt: number };
type Connection = { socket: Socket; pending?: Pending; received?: Buffer; warming?: () => void };
type Answer = { status: string; head: string; body: string };

const HEADER_END = Buffer.from('\r\n\r\n');

export async function runOpenLoop(spec: OpenLoopSpec): Promise<OpenLoopResult> {
  const run = new OpenLoopRun(spec);
  await run.warmUp();
  const startedAt = performance.now();
  await run.offer(startedAt);
  await run.drain(startedAt);
  return run.result(startedAt);
}

/** Requests waiting for a connection, oldest first; `shift` would copy a long backlog. */
class Backlog {
  private items: Pending[] = [];
  private head = 0;
  get length(): number {
    return this.items.length - this.head;
  }
  push(item: Pending): void {
    this.items.push(item);
  }
  take(): Pending | undefined {
    const next = this.items[this.head];
    if (next !== undefined) this.head += 1;
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return next;
  }
}

class OpenLoopRun {
  private readonly target: URL;
  private readonly encoded: Buffer[];
  private readonly idle: Connection[] = [];
  private readonly all = new Set<Connection>();
  private readonly backlog = new Backlog();
  private readonly latencies: number[] = [];
  private readonly refusalLatencies: number[] = [];
  private readonly fromSchedule: number[] = [];
  private readonly statusCounts: Record<string, number> = {};
  private readonly bodies: Record<string, string> = {};
  private withoutRetryAfter = 0;
  private turn = 0;
  private offered = 0;
  private socketErrors = 0;
  private timeouts = 0;
  private lastAnswerAt = 0;
  private running = false;

  constructor(private readonly spec: OpenLoopSpec) {
    this.target = new URL(spec.url);
    this.encoded = spec.requests.map((request) => encodeRequest(request, this.target.host));
  }

  /** Opens the pool and sends one request on each connection (answers not counted). */
  async warmUp(): Promise<void> {
    const warm = Array.from(
      { length: this.spec.connections },
      () =>
        new Promise<void>((resolve, reject) => {
          const connection = this.open();
          connection.pending = { scheduledAt: 0, sentAt: 0 };
          connection.warming = () => {
            connection.warming = undefined;
            this.idle.push(connection);
            resolve();
          };
          connection.socket.once('error', reject);
          connection.socket.once('close', () => reject(new Error('closed during warm-up')));
          connection.socket.write(this.nextRequest());
        }),
    );
    await Promise.all(warm);
    this.socketErrors = 0;
    this.running = true;
  }

  /** Dispatches every request as it falls due until the run's duration has passed. */
  offer(startedAt: number): Promise<void> {
    const endsAt = startedAt + this.spec.durationSeconds * 1000;
    const intervalMs = 1000 / this.spec.ratePerSecond;
    const expiry = setInterval(() => this.expire(), 50);
    return new Promise<void>((resolve) => {
      const schedule = setInterval(() => {
        const now = Math.min(performance.now(), endsAt);
        // Timers fire late on a busy machine: catch up on every request due by now.
        while (startedAt + this.offered * intervalMs < now) {
          this.dispatch({ scheduledAt: startedAt + this.offered * intervalMs, sentAt: 0 });
        }
        if (now >= endsAt) {
          clearInterval(schedule);
          clearInterval(expiry);
          resolve();
        }
      }, 1);
    });
  }

  /** Waits for the last answers (or their time-outs), then closes every connection. */
  async drain(startedAt: number): Promise<void> {
    const giveUpAt = startedAt + this.spec.durationSeconds * 1000 + this.spec.timeoutMs * 2;
    await new Promise<void>((resolve) => {
      const sweep = setInterval(() => {
        if (this.expire() + this.backlog.length === 0 || performance.now() > giveUpAt) {
          clearInterval(sweep);
          resolve();
        }
      }, 50);
    });
    this.running = false;
    for (const connection of [...this.all]) this.drop(connection);
  }

  result(startedAt: number): OpenLoopResult {
    const endsAt = startedAt + this.spec.durationSeconds * 1000;
    const seconds = (Math.max(this.lastAnswerAt, endsAt) - startedAt) / 1000;
    const answered = this.latencies.length;
    let unexpected = 0;
    for (const [status, count] of Object.entries(this.statusCounts)) {
      if (!this.spec.expectedStatuses.includes(Number(status))) unexpected += count;
    }
    return {
      offered: this.offered,
      answered,
      rps: answered / seconds,
      p50Ms: round2(percentile(this.latencies, 50)),
      p99Ms: round2(percentile(this.latencies, 99)),
      p99FromScheduleMs: round2(percentile(this.fromSchedule, 99)),
      refusalP99Ms: round2(percentile(this.refusalLatencies, 99)),
      errors: this.offered - answered + unexpected,
      socketErrors: this.socketErrors,
      timeouts: this.timeouts,
      statusCounts: this.statusCounts,
      bodies: this.bodies,
      withoutRetryAfter: this.withoutRetryAfter,
      durationSeconds: round2(seconds),
    };
  }

  private nextRequest(): Buffer {
    return this.encoded[this.turn++ % this.encoded.length] as Buffer;
  }

  private dispatch(pending: Pending): void {
    this.offered += 1;
    const connection = this.idle.pop();
    if (connection === undefined) this.backlog.push(pending);
    else this.send(connection, pending);
  }

  private send(connection: Connection, pending: Pending): void {
    pending.sentAt = performance.now();
    connection.pending = pending;
    connection.socket.write(this.nextRequest());
  }

  private release(connection: Connection): void {
    connection.pending = undefined;
    const next = this.backlog.take();
    if (next === undefined) this.idle.push(connection);
    else this.send(connection, next);
  }

  private open(): Connection {
    const port = Number(this.target.port || 80);
    const socket = connect({ host: this.target.hostname, port, noDelay: true });
    const connection: Connection = { socket };
    this.all.add(connection);
    socket.on('data', (chunk: Buffer) => this.onData(connection, chunk));
    const lost = () => {
      if (connection.pending !== undefined) this.socketErrors += 1;
      this.drop(connection);
    };
    socket.on('error', lost);
    socket.on('close', lost);
    return connection;
  }

  /** Closes a connection; during the run a new one takes its place (the pool keeps its size). */
  private drop(connection: Connection): void {
    connection.pending = undefined;
    if (!this.all.delete(connection)) return;
    const index = this.idle.indexOf(connection);
    if (index >= 0) this.idle.splice(index, 1);
    connection.socket.destroy();
    if (this.running) this.release(this.open());
  }

  /** Counts answers past the time-out (their connections replaced); answers how many wait. */
  private expire(): number {
    const now = performance.now();
    let waiting = 0;
    for (const connection of [...this.all]) {
      const { pending } = connection;
      if (pending === undefined || connection.warming !== undefined) continue;
      if (now - pending.sentAt > this.spec.timeoutMs) {
        this.timeouts += 1;
        this.drop(connection);
      } else {
        waiting += 1;
      }
    }
    return waiting;
  }

  private onData(connection: Connection, chunk: Buffer): void {
    const data =
      connection.received === undefined ? chunk : Buffer.concat([connection.received, chunk]);
    const answer = completeAnswer(data);
    if (answer === 'incomplete') {
      connection.received = data;
      return;
    }
    connection.received = undefined;
    if (answer === 'unreadable') {
      // Every answer the bench asks for has a Content-Length: anything else is an error.
      this.socketErrors += 1;
      this.drop(connection);
      return;
    }
    if (connection.warming !== undefined) {
      connection.pending = undefined;
      connection.warming();
      return;
    }
    const pending = connection.pending;
    if (pending !== undefined) this.record(answer, pending);
    if (/\r\nconnection:\s*close/i.test(answer.head)) this.drop(connection);
    else this.release(connection);
  }

  private record(answer: Answer, pending: Pending): void {
    const now = performance.now();
    this.lastAnswerAt = now;
    const { status } = answer;
    this.statusCounts[status] = (this.statusCounts[status] ?? 0) + 1;
    this.latencies.push(now - pending.sentAt);
    this.fromSchedule.push(now - pending.scheduledAt);
    if (status === '200') return;
    this.refusalLatencies.push(now - pending.sentAt);
    this.bodies[status] ??= answer.body;
    if (!/\r\nretry-after:\s*\d+/i.test(answer.head)) this.withoutRetryAfter += 1;
  }
}

/** One whole HTTP/1.1 answer with a Content-Length, or why there is none yet. */
function completeAnswer(data: Buffer): Answer | 'incomplete' | 'unreadable' {
  const headerEnd = data.indexOf(HEADER_END);
  if (headerEnd < 0) return 'incomplete';
  const head = data.toString('latin1', 0, headerEnd);
  const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? NaN);
  if (!Number.isFinite(length)) return 'unreadable';
  const bodyStart = headerEnd + HEADER_END.length;
  if (data.length < bodyStart + length) return 'incomplete';
  return {
    status: head.slice(9, 12),
    head,
    body: data.toString('utf8', bodyStart, bodyStart + length),
  };
}

function encodeRequest(request: LoadRequest, host: string): Buffer {
  const body = request.body === undefined ? '' : String(request.body);
  const lines = [`${request.method ?? 'GET'} ${request.path ?? '/'} HTTP/1.1`, `host: ${host}`];
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    lines.push(`${name}: ${String(value)}`);
  }
  lines.push(`content-length: ${Buffer.byteLength(body)}`, '', body);
  return Buffer.from(lines.join('\r\n'));
}
