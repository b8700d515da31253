import { readFile } from 'node:fs/promises';
import { describe, expect, it } from '@jest/globals';
import { renderConfigTable } from '@gateway/config';

const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
const ciScript = await readFile(new URL('../.ci/run', import.meta.url), 'utf8');

// Table rows as trimmed cells, so Prettier's column padding does not matter.
const rows = (markdown: string) =>
  markdown
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[-| ]+\|$/.test(line))
    .map((line) => line.split('|').map((cell) => cell.trim()));

describe('README', () => {
  it('documents every configuration variable exactly as the config package defines it', () => {
    const start = readme.indexOf('<!-- config-table:start -->');
    const end = readme.indexOf('<!-- config-table:end -->');
    expect(start).toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(start);
    expect(rows(readme.slice(start, end))).toEqual(rows(renderConfigTable()));
  });

  it('opens with the install-and-start command and the test command, and CI runs the latter', () => {
    const commands = [...readme.matchAll(/```sh\n(.+)\n```/g)].map((match) => match[1]);
    expect(commands.slice(0, 2)).toEqual([
      'npx -y pnpm@10.34.9 install && npx -y pnpm@10.34.9 start',
      'npx -y pnpm@10.34.9 test',
    ]);
    expect(ciScript.split('\n')).toContain('npx -y pnpm@10.34.9 test');
  });
});
