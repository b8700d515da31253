import { chmod, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Takes group and other permissions off `path` and everything under it (symbolic links are
 * left alone). PGlite unpacks its initial cluster as mode 0666 files whatever the umask, and
 * the data folder also holds the embedded keys. Entries that vanish meanwhile are skipped.
 */
export async function restrictToOwner(path: string): Promise<void> {
  try {
    const stats = await lstat(path);
    if (stats.isSymbolicLink()) return;
    if ((stats.mode & 0o077) !== 0) await chmod(path, stats.mode & 0o700);
    if (!stats.isDirectory()) return;
    for (const name of await readdir(path)) await restrictToOwner(join(path, name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
