import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { STDOUT_FLUSH_INTERVAL_MS } from './logger.js';

// The default destination writes stdout in batches; no line is lost or reordered at
// exit, and an idle process still writes its lines within the flush interval.
const child = fileURLToPath(new URL('./testing/stdout-logger-child.ts', import.meta.url));

type Run = {
  lines: { index: number }[];
  writes: number;
  code: number | null;
  /** How long before the child ended its first stdout bytes arrived. */
  firstLineBeforeExitMs: number | undefined;
};

function run(mode: string, count: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    let firstDataAt: number | undefined;
    const process_ = spawn(
      process.execPath,
      ['--conditions=@gateway/source', '--import', 'tsx', child, mode, String(count)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    process_.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      firstDataAt ??= Date.now();
    });
    process_.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    process_.once('error', reject);
    process_.once('exit', (code) => {
      const writes = /writes=(\d+)/.exec(err)?.[1];
      if (writes === undefined) {
        reject(new Error(`no write count from the child: ${err}`));
        return;
      }
      const lines = out
        .split('\n')
        .filter((text) => text !== '')
        .map((text) => JSON.parse(text) as { index: number });
      const firstLineBeforeExitMs =
        firstDataAt === undefined ? undefined : Date.now() - firstDataAt;
      resolve({ lines, writes: Number(writes), code, firstLineBeforeExitMs });
    });
  });
}

const indexes = (count: number) => Array.from({ length: count }, (_, index) => index);

describe('stdout logging', () => {
  it('writes lines logged a millisecond apart in a few writes', async () => {
    const result = await run('spread', 200);
    expect(result.lines.map((line) => line.index)).toEqual(indexes(200));
    // About 200 bytes a line: a write per 4 KiB or per interval (one per line before).
    expect(result.writes).toBeLessThanOrEqual(20);
  });

  it('writes the lines of an idle process within the flush interval, while it runs', async () => {
    const result = await run('idle', 3);
    expect(result.lines.map((line) => line.index)).toEqual(indexes(3));
    expect(result.code).toBe(0);
    expect(result.writes).toBe(1);
    // The child stays up 3 s after logging: its lines came long before it ended.
    expect(STDOUT_FLUSH_INTERVAL_MS).toBeLessThanOrEqual(100);
    expect(result.firstLineBeforeExitMs).toBeGreaterThan(2_000);
  });

  it('loses no line and keeps their order at process.exit or an uncaught exception', async () => {
    // Several batches written while logging, the rest at exit.
    const exited = await run('exit', 200);
    expect(exited.lines.map((line) => line.index)).toEqual(indexes(200));
    const crashed = await run('throw', 200);
    expect(crashed.code).not.toBe(0);
    expect(crashed.lines.map((line) => line.index)).toEqual(indexes(200));
  });
});
