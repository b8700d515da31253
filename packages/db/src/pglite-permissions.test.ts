import { readdir, lstat, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDatabase } from './create-database.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'gateway-pglite-modes-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Every entry under `folder` whose mode lets the group or others in, with its mode. */
async function openToOthers(folder: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(folder, { recursive: true })) {
    const path = join(folder, entry);
    const stats = await lstat(path);
    if (!stats.isSymbolicLink() && (stats.mode & 0o077) !== 0) {
      found.push(`${entry} ${(stats.mode & 0o777).toString(8)}`);
    }
  }
  return found;
}

describe('embedded PostgreSQL on disk', () => {
  it('keeps its folder and every file in it to the owner (PGlite unpacks them as 0666)', async () => {
    const dataDir = join(root, 'cluster');
    const db = await createDatabase({ dataDir });
    try {
      await db.knex.raw('create table owner_only (id int)');
      expect((await lstat(dataDir)).mode & 0o777).toBe(0o700);
      expect(await openToOthers(dataDir)).toEqual([]);
      expect((await lstat(join(dataDir, 'postgresql.conf'))).mode & 0o777).toBe(0o600);
      expect((await lstat(join(dataDir, 'pg_hba.conf'))).mode & 0o777).toBe(0o600);
    } finally {
      await db.close();
    }
  });
});
