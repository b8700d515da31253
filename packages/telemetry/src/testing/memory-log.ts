import type { DestinationStream } from 'pino';

/** A pino destination that keeps the lines it receives, parsed. */
export function createMemoryLog(): {
  destination: DestinationStream;
  raw: string[];
  lines: () => Record<string, unknown>[];
} {
  const raw: string[] = [];
  return {
    destination: { write: (line: string) => void raw.push(line) },
    raw,
    lines: () => raw.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
