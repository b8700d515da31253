// Imported into the all-in-one gateway by `pnpm bench --alloc-prof` (node --import, after
// tsx): V8's sampling heap profiler, driven by the bench over the process's IPC channel, so
// that each profile covers one measured level. Unlike `--heap-prof`, it keeps the samples of
// objects the garbage collector has already freed: what a request allocates, not what is
// still alive at the end, which is what garbage collection costs and what the CPU profiles
// do not show (knex's share of a sign-in was found this way). With `survivorsOnly`
// (`--alloc-survivors`) it drops the objects a scavenge freed and keeps what reached the old
// generation: what drives the major collections. Bench-only: never in the gateway's own code.
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';

export type AllocationProfileMessage =
  | { allocationProfile: 'start'; survivorsOnly: boolean }
  | { allocationProfile: 'stop'; file: string };

const session = new Session();
session.connect();
let sampling = false;

async function onMessage(message: unknown): Promise<void> {
  // Sent by the bench only (processes.ts, allocationCommand): one type, narrowed by its tag.
  const command = message as AllocationProfileMessage | null;
  if (command?.allocationProfile === 'start' && !sampling) {
    sampling = true;
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 8192,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: command.survivorsOnly !== true,
    });
    process.send?.({ allocationProfile: 'started' });
  } else if (command?.allocationProfile === 'stop' && sampling) {
    sampling = false;
    const { profile } = await session.post('HeapProfiler.stopSampling');
    const { file } = command;
    await writeFile(file, JSON.stringify(profile));
    process.send?.({ allocationProfile: 'written', file });
  }
}

process.on('message', (message) => {
  onMessage(message).catch((error: unknown) => {
    process.send?.({ allocationProfile: 'failed', error: String(error) });
  });
});
// The IPC channel must not keep the gateway alive once it shuts down.
process.channel?.unref();
