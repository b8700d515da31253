import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

// The identity UI runs this package in the browser, so its runtime code must not depend on
// Node: no node: (or bare Node built-in) imports and no Node-only globals.
const dir = fileURLToPath(new URL('.', import.meta.url));
const runtimeFiles = readdirSync(dir).filter(
  (name) => name.endsWith('.ts') && !name.endsWith('.test.ts'),
);

describe('browser safety', () => {
  it.each(runtimeFiles)('%s imports only zod and relative modules, no Node globals', (name) => {
    const source = readFileSync(`${dir}/${name}`, 'utf8');
    const imports = [...source.matchAll(/from '([^']+)'/g)].map((match) => match[1]);
    for (const specifier of imports) expect(specifier).toMatch(/^(zod|\.\/[\w-]+\.js)$/);
    expect(source).not.toMatch(/\b(process|Buffer|require|__dirname)\b[.(]/);
  });
});
