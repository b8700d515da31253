import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { round2 } from './report.js';
import { runOpenLoop, type OpenLoopResult, type OpenLoopSpec } from './open-loop.js';

// S5's open-loop generator on a thread of its own. On the bench's main thread it shared an
// event loop and a heap with everything the bench holds by then (S2's batches of handoff
// codes, every level's latency samples, the sign-in browsers), so a major collection of that
// heap, or any long turn of the bench, would stop the schedule: the requests due meanwhile
// go out late in one burst and count as slow answers of the gateway. A worker has its own V8
// isolate (its own heap and collections) and its own event loop. Each S5 row reports both
// threads' longest stall, so the two can be compared.

/**
 * Runs `runOpenLoop(spec)` on a worker thread and answers its result, with the bench thread's
 * own longest stall meanwhile: what would have delayed the schedule on the bench's thread.
 */
export async function runOpenLoopInWorker(
  spec: OpenLoopSpec,
): Promise<OpenLoopResult & { benchThreadStallMaxMs: number }> {
  const benchThread = monitorEventLoopDelay({ resolution: 10 });
  benchThread.enable();
  // On Node 20 a worker's entry module is loaded before the `--import tsx` it inherits has
  // registered its hooks, so a TypeScript entry fails; the worker registers tsx itself first.
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const self = JSON.stringify(import.meta.url);
  const worker = new Worker(
    `import(${tsx}).then((api) => { api.register(); return import(${self}); });`,
    { eval: true, workerData: spec },
  );
  try {
    const result = await new Promise<OpenLoopResult>((resolve, reject) => {
      worker.once('message', (result: OpenLoopResult) => resolve(result));
      worker.once('error', reject);
      worker.once('exit', (code) =>
        reject(new Error(`the open-loop worker exited (${code}) without a result`)),
      );
    });
    return { ...result, benchThreadStallMaxMs: round2(benchThread.max / 1e6) };
  } finally {
    benchThread.disable();
    await worker.terminate();
  }
}

if (!isMainThread && parentPort !== null) {
  const port = parentPort;
  // The spec comes from runOpenLoopInWorker above, the one creator of this worker.
  void runOpenLoop(workerData as OpenLoopSpec).then((result) => port.postMessage(result));
}
