import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateEncryptionKeySpec, randomToken } from '@gateway/crypto';

type EmbeddedSecrets = { GATEWAY_ENCRYPTION_KEYS: string; IDENTITY_ENVIRONMENT_SECRET_KEY: string };

/**
 * The embedded default needs at-rest encryption keys but asks the newcomer for none: they
 * are generated on the first start into `<dataDir>/secrets.json` (mode 0600) and read back
 * on later starts, so encrypted data stays readable across restarts.
 */
export async function loadOrCreateEmbeddedSecrets(dataDir: string): Promise<EmbeddedSecrets> {
  const file = join(dataDir, 'secrets.json');
  try {
    const stored = JSON.parse(await readFile(file, 'utf8')) as Partial<EmbeddedSecrets>;
    if (stored.GATEWAY_ENCRYPTION_KEYS && stored.IDENTITY_ENVIRONMENT_SECRET_KEY) {
      return stored as EmbeddedSecrets;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const secrets: EmbeddedSecrets = {
    GATEWAY_ENCRYPTION_KEYS: generateEncryptionKeySpec('k1'),
    IDENTITY_ENVIRONMENT_SECRET_KEY: randomToken(32),
  };
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  return secrets;
}
