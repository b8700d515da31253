import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

// Creating a PGlite cluster (initdb in WebAssembly) takes seconds; loading a copy of a fresh one
// takes a fraction of that. New databases (in memory, or in a new data folder) therefore start
// from a snapshot of a pristine cluster, made once per machine and PGlite build and kept in a
// folder of the user's own under the temporary folder, so each process loads rather than
// creates.

let pristineClusterPromise: Promise<Blob> | undefined;

/** A gzip snapshot of a freshly created cluster, for `PGlite.create({ loadDataDir })`. */
export function pristineCluster(): Promise<Blob> {
  pristineClusterPromise ??= loadOrMakePristineCluster().catch((error: unknown) => {
    pristineClusterPromise = undefined;
    throw error;
  });
  return pristineClusterPromise;
}

async function loadOrMakePristineCluster(): Promise<Blob> {
  const file = await snapshotFile();
  if (file !== undefined) {
    const saved = await readFile(file).catch(() => undefined);
    if (saved !== undefined) return new Blob([saved]);
  }
  const template = await PGlite.create();
  let snapshot: Blob;
  try {
    snapshot = await template.dumpDataDir('gzip');
  } finally {
    await template.close();
  }
  if (file !== undefined) {
    // Written aside and renamed, so a reader never sees half a snapshot.
    const partial = `${file}.${randomBytes(6).toString('hex')}`;
    await writeFile(partial, Buffer.from(await snapshot.arrayBuffer()), { mode: 0o600 });
    await rename(partial, file);
  }
  return snapshot;
}

/**
 * Where the snapshot of this PGlite build lives, or undefined when no folder of this user's
 * own can be had (then each process makes its snapshot in memory).
 */
async function snapshotFile(): Promise<string | undefined> {
  try {
    const folder = join(tmpdir(), `gateway-pglite-${process.getuid?.() ?? 'user'}`);
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const folderStat = await stat(folder);
    const ownUid = process.getuid?.();
    if (ownUid !== undefined && folderStat.uid !== ownUid) return undefined;
    if ((folderStat.mode & 0o077) !== 0) return undefined;
    // The build is named by its module file, so an upgraded PGlite makes a new snapshot.
    const module = await stat(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
    return join(folder, `pristine-${module.size}-${Math.trunc(module.mtimeMs)}.tar.gz`);
  } catch {
    return undefined;
  }
}
