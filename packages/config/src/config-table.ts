import { configVariables } from './config-variables.js';
import type { ConfigVariable } from './config-variables.js';

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

function row(entry: ConfigVariable): string {
  const description = entry.secret ? `${entry.description} Secret.` : entry.description;
  return [
    `\`${entry.name}\``,
    entry.required ? 'yes' : 'no',
    entry.default === undefined || entry.default === '' ? '' : `\`${cell(entry.default)}\``,
    cell(description),
  ].join(' | ');
}

/** The configuration table for README and docs, generated from configVariables. */
export function renderConfigTable(variables: readonly ConfigVariable[] = configVariables): string {
  const lines = [
    '| Variable | Required | Default | Description |',
    '|---|---|---|---|',
    ...variables.map((entry) => `| ${row(entry)} |`),
  ];
  return `${lines.join('\n')}\n`;
}
