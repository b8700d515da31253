import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from '@jest/globals';
import { allowedCpus, parseCpuList, pinProcess } from './pinning.js';

describe('parseCpuList', () => {
  it('reads ranges and single CPUs', () => {
    expect(parseCpuList('0-2,4')).toEqual([0, 1, 2, 4]);
    expect(parseCpuList('1')).toEqual([1]);
    expect(parseCpuList('')).toEqual([]);
  });
});

describe('pinProcess', () => {
  let child: ReturnType<typeof spawn> | undefined;
  afterEach(() => {
    child?.kill('SIGKILL');
  });

  it('binds every thread of a running Node.js process to the CPUs given', async () => {
    const cpus = await allowedCpus();
    const [last = 0] = cpus.slice(-1);
    // Once it runs code, Node.js has started its worker threads (V8's and libuv's).
    const running = spawn(
      process.execPath,
      ['-e', "process.stdout.write('up'); setInterval(() => {}, 1000)"],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    child = running;
    await new Promise((resolve) => running.stdout.once('data', resolve));
    const pid = running.pid ?? 0;
    await pinProcess(pid, [last]);
    const threads = await readdir(`/proc/${pid}/task`);
    expect(threads.length).toBeGreaterThan(1);
    for (const thread of threads) {
      const status = await readFile(`/proc/${pid}/task/${thread}/status`, 'utf8');
      expect(/^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1]).toBe(String(last));
    }
  });
});
