import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Ctrl-C as the byte a terminal sends when it does not turn it into SIGINT itself. */
const CTRL_C = 0x03;

/**
 * Runs `close` once on SIGTERM or SIGINT (Kubernetes, docker stop, Ctrl-C), then exits.
 * `close` should stop accepting work, let in-flight requests finish and close pools; when
 * it takes longer than `graceMs` the process exits anyway with status 1.
 *
 * With `ctrlCFromTerminal`, when stdin is the terminal and this process is in its
 * foreground, Ctrl-C is read as a key instead of being a signal (the terminal is put in raw
 * mode; Node restores it at exit). A Ctrl-C signal goes to every process of the foreground
 * group: under `npx pnpm start` that is npm, pnpm, their `sh -c` wrappers and tsx too, and
 * the shells die of it at once, so the command fails with 130 and `ELIFECYCLE` however
 * cleanly this process ends. As a key, only this process hears it, exits 0, and so does
 * every wrapper. A second Ctrl-C exits at once with status 130.
 */
export function closeOnShutdownSignals(options: {
  close: () => Promise<void>;
  onError: (error: unknown) => void;
  graceMs?: number;
  ctrlCFromTerminal?: boolean;
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
  if (options.ctrlCFromTerminal === true && isForegroundOfTerminal()) {
    readCtrlCFromTerminal(() => {
      if (closing) process.exit(130);
      shutdown();
    });
  }
}

function readCtrlCFromTerminal(onCtrlC: () => void): void {
  const stdin = process.stdin;
  stdin.setRawMode(true);
  stdin.on('data', (chunk: Buffer) => {
    if (chunk.includes(CTRL_C)) onCtrlC();
  });
  // Reading stdin must not keep the process alive once everything else has closed.
  stdin.unref();
}

/**
 * stdin and stdout are a terminal and this process's group is its foreground group: raw
 * mode from a background job (`pnpm start &`) would stop the job (SIGTTOU). Linux answers
 * from /proc, other systems through `ps`; when neither answers, Ctrl-C stays a signal.
 */
export function isForegroundOfTerminal(): boolean {
  if (process.stdin.isTTY !== true || process.stdout.isTTY !== true) return false;
  const groups = processGroups();
  return groups !== undefined && groups.own > 0 && groups.own === groups.foreground;
}

function processGroups(): { own: number; foreground: number } | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name: state ppid pgrp session tty_nr tpgid ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { own: Number(fields[2]), foreground: Number(fields[5]) };
  } catch {
    // No /proc (macOS, the BSDs).
  }
  try {
    const output = execFileSync('ps', ['-o', 'pgid=,tpgid=', '-p', String(process.pid)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const [own, foreground] = output.trim().split(/\s+/).map(Number);
    return own === undefined || foreground === undefined ? undefined : { own, foreground };
  } catch {
    return undefined;
  }
}
