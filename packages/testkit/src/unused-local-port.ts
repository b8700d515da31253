import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports handed out below the system's ephemeral range: the local ports of outgoing
 * connections come from that range, so a port picked there and freed can be taken by a
 * connection before the test's server binds it. Each Jest worker has a slice of its own, so
 * parallel test files do not pick the same port either.
 */
const SLICE_SIZE = 1_000;
const SLICES = 12;

/** The first port of this process's slice, or undefined to let the OS pick. */
function sliceStart(): number | undefined {
  const ephemeralStart = ephemeralRangeStart();
  const rangeStart = ephemeralStart - SLICE_SIZE * SLICES;
  if (rangeStart < 10_000) return undefined;
  const worker = Number(process.env.JEST_WORKER_ID);
  const slice = Number.isInteger(worker) && worker > 0 ? (worker - 1) % SLICES : randomSlice();
  return rangeStart + slice * SLICE_SIZE;
}

function ephemeralRangeStart(): number {
  try {
    const [start] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/);
    return Number(start) || 32_768;
  } catch {
    return 32_768;
  }
}

const randomSlice = () => Math.floor(Math.random() * SLICES);

const start = sliceStart();
/** Where the next pick in the slice begins: a random place, then onwards. */
let cursor = Math.floor(Math.random() * SLICE_SIZE);

/**
 * A TCP port on 127.0.0.1 that was free a moment ago: the next free one of this worker's
 * slice (or one the OS picked, where no slice fits below the ephemeral range).
 */
export async function unusedLocalPort(): Promise<number> {
  if (start === undefined) return listenAndRelease(0);
  for (let attempt = 0; attempt < SLICE_SIZE; attempt += 1) {
    const port = start + (cursor % SLICE_SIZE);
    cursor += 1;
    const free = await listenAndRelease(port).catch(() => undefined);
    if (free !== undefined) return free;
  }
  throw new Error(`No free port in ${start}-${start + SLICE_SIZE - 1}`);
}

/** Listens on `port` (0: any) of 127.0.0.1, closes, and answers the port it had. */
function listenAndRelease(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('Could not read the port of a listening socket'));
        return;
      }
      const { port: bound } = address;
      server.close((error) => (error ? reject(error) : resolve(bound)));
    });
  });
}
