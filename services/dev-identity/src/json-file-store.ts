import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { DevStore } from './dev-identity-options.js';

/**
 * A `DevStore` in one JSON file (an array), e.g. the signing keys or the accounts under the
 * embedded default's data folder. A missing file loads as undefined; a save replaces the file
 * atomically (write, then rename) and keeps it readable by its owner only, since it holds
 * private keys or password hashes.
 */
export function createJsonFileStore<T>(filePath: string): DevStore<T> {
  return {
    async load() {
      let text: string;
      try {
        text = await readFile(filePath, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      const parsed: unknown = JSON.parse(text);
      if (!Array.isArray(parsed)) throw new Error(`${filePath} does not hold a JSON array`);
      return parsed as T[];
    },
    async save(items) {
      await mkdir(dirname(filePath), { recursive: true });
      const temporary = `${filePath}.${process.pid}.tmp`;
      await writeFile(temporary, `${JSON.stringify(items, null, 2)}\n`, { mode: 0o600 });
      await rename(temporary, filePath);
    },
  };
}
