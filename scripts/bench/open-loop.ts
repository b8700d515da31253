import { connect, type Socket } from 'node:net';
import type { LoadRequest } from './load.js';
import { percentile, round2 } from './report.js';

// S5's load generator. autocannon is closed-loop: each connection sends its next request when
// the previous one was answered, so a slower server is simply offered less, and 120% of
// capacity can only be approached with ever more connections, which on two shared cores take
// the CPU from the server. This one is open-loop (like wrk2 or k6's constant arrival rate):
// requests are sent at the set rate whatever the answers do, each on an idle connection of a
// fixed pool of kept-alive ones (waiting, oldest first, when none is idle); one request in
// flight per connection, no pipelining. Requests are encoded once, and answers are read just
// far enough to know their status and end.

export type OpenLoopSpec = {
  /** `http://host:port`; plain HTTP/1.1. */
  url: string;
  ratePerSecond: number;
  durationSeconds: number;
  /** Sent in turn. */
  requests: LoadRequest[];
  /**
   * The clients' pool of kept-alive connections, opened and each used once before the clock
   * starts. It does not grow: a request finding no idle connection waits for one. A
   * connection lost during the run (an error, a time-out) is replaced at once.
   */
  connections: number;
  /** An answer not complete this long after its request was written counts as a time-out. */
  timeoutMs: number;
  expectedStatuses: number[];
};

export type OpenLoopResult = {
  /** Requests the schedule called for, and those written. */
  offered: number;
  sent: number;
  answered: number;
  rps: number;
  /** From writing the request to the end of its answer. */
  p50Ms: number;
  p99Ms: number;
  /** From when the schedule called for the request (includes waiting for a connection). */
  p99FromScheduleMs: number;
  /** p50 and p99 (from writing) of the answers with each status. */
  latencyByStatus: Record<string, { p50Ms: number; p99Ms: number }>;
  /** Socket errors, time-outs and answers with an unexpected status. */
  errors: number;
  socketErrors: number;
  timeouts: number;
  statusCounts: Record<string, number>;
  durationSeconds: number;
  /** Connections opened during the run to replace lost ones. */
  connectionsReplaced: number;
  /** The most requests that waited for a connection at once (0: the pool kept up). */
  backlogMax: number;
  /**
   * The generator's own longest stall: the longest gap between two turns of its 1 ms
   * schedule. Requests due in a stall go out late, in a burst, and count as slow answers.
   */
  generatorStallMaxMs: number;
  /** The first answer body seen for each status other than 200. */
  bodies: Record<string, string>;
};

type Pending = { scheduledAt: number; sentAt: number };
type Connection = {
  socket: Socket;
  pending: Pending | undefined;
  received: Buffer | undefined;
  /** Set while the connection's warm-up request is answered. */
  warming?: (() => void) | undefined;
};

const HEADER_END = Buffer.from('\r\n\r\n');

export async function runOpenLoop(spec: OpenLoopSpec): Promise<OpenLoopResult> {
  const target = new URL(spec.url);
  const port = Number(target.port || 80);
  const encoded = spec.requests.map((request) => encodeRequest(request, target.host));
  const idle: Connection[] = [];
  const all = new Set<Connection>();
  // Requests waiting for a connection, oldest first: an array read from `backlogHead`, so
  // taking the oldest costs the same however long the backlog grows (Array#shift copies a
  // long array on every call, and a backlog of 100,000s took the generator's CPU at 200%).
  let backlog: Pending[] = [];
  let backlogHead = 0;
  const backlogLength = () => backlog.length - backlogHead;
  const nextWaiting = (): Pending | undefined => {
    if (backlogHead === backlog.length) return undefined;
    const next = backlog[backlogHead++];
    if (backlogHead === backlog.length) {
      backlog = [];
      backlogHead = 0;
    } else if (backlogHead >= 4096 && backlogHead * 2 >= backlog.length) {
      backlog = backlog.slice(backlogHead);
      backlogHead = 0;
    }
    return next;
  };
  const latencies: number[] = [];
  const byStatus = new Map<string, number[]>();
  const fromSchedule: number[] = [];
  const statusCounts: Record<string, number> = {};
  const bodies: Record<string, string> = {};
  let turn = 0;
  let offered = 0;
  let sent = 0;
  let socketErrors = 0;
  let timeouts = 0;
  let replaced = 0;
  let backlogMax = 0;
  let lastAnswerAt = 0;

  const send = (connection: Connection, pending: Pending) => {
    pending.sentAt = performance.now();
    connection.pending = pending;
    sent += 1;
    connection.socket.write(encoded[turn++ % encoded.length] as Buffer);
  };
  const release = (connection: Connection) => {
    connection.pending = undefined;
    const next = nextWaiting();
    if (next === undefined) idle.push(connection);
    else send(connection, next);
  };
  let running = false;
  const drop = (connection: Connection) => {
    if (!all.delete(connection)) return;
    const index = idle.indexOf(connection);
    if (index >= 0) idle.splice(index, 1);
    connection.socket.destroy();
    // The pool keeps its size; the replacement serves the oldest waiting request first.
    if (running) {
      replaced += 1;
      release(open());
    }
  };
  const open = (): Connection => {
    const socket = connect({ host: target.hostname, port, noDelay: true });
    const connection: Connection = { socket, pending: undefined, received: undefined };
    all.add(connection);
    socket.on('data', (chunk: Buffer) => onData(connection, chunk));
    const lost = () => {
      if (connection.pending !== undefined) socketErrors += 1;
      connection.pending = undefined;
      drop(connection);
    };
    socket.on('error', lost);
    socket.on('close', lost);
    return connection;
  };
  const onData = (connection: Connection, chunk: Buffer) => {
    const data =
      connection.received === undefined ? chunk : Buffer.concat([connection.received, chunk]);
    const headerEnd = data.indexOf(HEADER_END);
    if (headerEnd < 0) {
      connection.received = data;
      return;
    }
    const head = data.toString('latin1', 0, headerEnd);
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? NaN);
    const bodyStart = headerEnd + HEADER_END.length;
    if (!Number.isFinite(length)) {
      // Every answer of the gateway's introspection has a length; anything else is an error.
      socketErrors += 1;
      connection.pending = undefined;
      drop(connection);
      return;
    }
    if (data.length < bodyStart + length) {
      connection.received = data;
      return;
    }
    connection.received = undefined;
    if (connection.warming !== undefined) {
      connection.pending = undefined;
      connection.warming();
      return;
    }
    const pending = connection.pending;
    if (pending === undefined) return;
    const now = performance.now();
    lastAnswerAt = now;
    const status = head.slice(9, 12);
    statusCounts[status] = (statusCounts[status] ?? 0) + 1;
    if (status !== '200') bodies[status] ??= data.toString('utf8', bodyStart, bodyStart + length);
    latencies.push(now - pending.sentAt);
    let ofStatus = byStatus.get(status);
    if (ofStatus === undefined) byStatus.set(status, (ofStatus = []));
    ofStatus.push(now - pending.sentAt);
    fromSchedule.push(now - pending.scheduledAt);
    if (/\r\nconnection:\s*close/i.test(head)) {
      connection.pending = undefined;
      drop(connection);
      return;
    }
    release(connection);
  };
  const dispatch = (pending: Pending) => {
    offered += 1;
    const connection = idle.pop();
    if (connection === undefined) {
      backlog.push(pending);
      backlogMax = Math.max(backlogMax, backlogLength());
    } else {
      send(connection, pending);
    }
  };

  // The initial pool: connected and each used once (answers not counted), as the kept-alive
  // connections of clients that were already talking to the server.
  const warm = Array.from(
    { length: spec.connections },
    () =>
      new Promise<void>((resolve, reject) => {
        const connection = open();
        connection.pending = { scheduledAt: 0, sentAt: 0 };
        connection.warming = () => {
          connection.warming = undefined;
          idle.push(connection);
          resolve();
        };
        connection.socket.once('error', reject);
        connection.socket.once('close', () =>
          reject(new Error('closed before its warm-up answer')),
        );
        connection.socket.write(encoded[turn++ % encoded.length] as Buffer);
      }),
  );
  await Promise.all(warm);
  socketErrors = 0;
  running = true;
  const startedAt = performance.now();
  const endsAt = startedAt + spec.durationSeconds * 1000;
  const intervalMs = 1000 / spec.ratePerSecond;
  // Answers not complete within the time-out count as time-outs (their connection replaced).
  const expire = (now: number): number => {
    let waiting = 0;
    for (const connection of [...all]) {
      const { pending } = connection;
      if (pending === undefined) continue;
      if (now - pending.sentAt > spec.timeoutMs) {
        timeouts += 1;
        connection.pending = undefined;
        drop(connection);
      } else {
        waiting += 1;
      }
    }
    return waiting;
  };
  const expiry = setInterval(() => expire(performance.now()), 50);
  let lastTickAt = startedAt;
  let stallMax = 0;
  await new Promise<void>((resolve) => {
    const schedule = setInterval(() => {
      const tickAt = performance.now();
      stallMax = Math.max(stallMax, tickAt - lastTickAt);
      lastTickAt = tickAt;
      const now = Math.min(tickAt, endsAt);
      // Catch up on every request due by now (timers fire late on a busy machine).
      while (startedAt + offered * intervalMs < now) {
        dispatch({ scheduledAt: startedAt + offered * intervalMs, sentAt: 0 });
      }
      if (now >= endsAt) {
        clearInterval(schedule);
        resolve();
      }
    }, 1);
  });
  clearInterval(expiry);
  // The last answers (and time-outs), then close everything.
  await new Promise<void>((resolve) => {
    const sweep = setInterval(() => {
      const now = performance.now();
      if (expire(now) + backlogLength() === 0 || now > endsAt + spec.timeoutMs * 2) {
        clearInterval(sweep);
        resolve();
      }
    }, 50);
  });
  running = false;
  const seconds = Math.max(lastAnswerAt, endsAt) - startedAt;
  for (const connection of [...all]) drop(connection);

  const answered = latencies.length;
  let unexpected = 0;
  for (const [status, count] of Object.entries(statusCounts)) {
    if (!spec.expectedStatuses.includes(Number(status))) unexpected += count;
  }
  return {
    offered,
    sent,
    answered,
    rps: answered / (seconds / 1000),
    p50Ms: round2(percentile(latencies, 50)),
    p99Ms: round2(percentile(latencies, 99)),
    p99FromScheduleMs: round2(percentile(fromSchedule, 99)),
    latencyByStatus: Object.fromEntries(
      [...byStatus].map(([status, values]) => [
        status,
        { p50Ms: round2(percentile(values, 50)), p99Ms: round2(percentile(values, 99)) },
      ]),
    ),
    errors: socketErrors + timeouts + unexpected + backlogLength(),
    socketErrors,
    timeouts,
    statusCounts,
    durationSeconds: seconds / 1000,
    connectionsReplaced: replaced,
    backlogMax,
    generatorStallMaxMs: round2(stallMax),
    bodies,
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
