import { configVariables } from './config-variables.js';
import type { ConfigVariable } from './config-variables.js';

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

/** The run commands that stop without the variable, or `no`. */
function requiredCell(entry: ConfigVariable): string {
  if (entry.requiredBy.length === 0) return 'no';
  return entry.requiredBy.map((command) => `\`${command}\``).join(', ');
}

function row(entry: ConfigVariable): string {
  const description = entry.secret ? `${entry.description} Secret.` : entry.description;
  return [
    `\`${entry.name}\``,
    requiredCell(entry),
    entry.default === undefined || entry.default === '' ? '' : `\`${cell(entry.default)}\``,
    cell(description),
  ].join(' | ');
}

/**
 * The configuration table for README and docs, generated from configVariables. Its Required
 * column names the run commands (`npx -y pnpm@10.34.9 <command>`) that stop without the variable.
 */
export function renderConfigTable(variables: readonly ConfigVariable[] = configVariables): string {
  const lines = [
    '| Variable | Required | Default | Description |',
    '|---|---|---|---|',
    ...variables.map((entry) => `| ${row(entry)} |`),
  ];
  return `${lines.join('\n')}\n`;
}
