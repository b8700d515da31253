import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateEncryptionKeySpec, randomToken } from '@gateway/crypto';

type EmbeddedSecrets = {
  GATEWAY_ENCRYPTION_KEYS: string;
  IDENTITY_ENVIRONMENT_SECRET_KEY: string;
  /** The gateway's client secret at the development identity service (and IDENTITY_OIDC_CLIENT_SECRET). */
  DEV_IDENTITY_GATEWAY_CLIENT_SECRET: string;
  /** A machine client (`gateway-admin`) for admin API tokens against the embedded gateway. */
  DEV_IDENTITY_ADMIN_CLIENT_SECRET: string;
  IDENTITY_SERVICE_KEY: string;
};

/**
 * The embedded default needs at-rest encryption keys but asks the newcomer for none: they
 * are generated on the first start into `<dataDir>/secrets.json` (mode 0600) and read back
 * on later starts, so encrypted data stays readable across restarts.
 */
export async function loadOrCreateEmbeddedSecrets(dataDir: string): Promise<EmbeddedSecrets> {
  const file = join(dataDir, 'secrets.json');
  let stored: Partial<EmbeddedSecrets> = {};
  try {
    stored = JSON.parse(await readFile(file, 'utf8')) as Partial<EmbeddedSecrets>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  // Values kept from earlier starts win; missing ones (a data folder of an older version)
  // are generated.
  const secrets: EmbeddedSecrets = {
    GATEWAY_ENCRYPTION_KEYS: stored.GATEWAY_ENCRYPTION_KEYS ?? generateEncryptionKeySpec('k1'),
    IDENTITY_ENVIRONMENT_SECRET_KEY: stored.IDENTITY_ENVIRONMENT_SECRET_KEY ?? randomToken(32),
    DEV_IDENTITY_GATEWAY_CLIENT_SECRET:
      stored.DEV_IDENTITY_GATEWAY_CLIENT_SECRET ?? randomToken(32),
    DEV_IDENTITY_ADMIN_CLIENT_SECRET: stored.DEV_IDENTITY_ADMIN_CLIENT_SECRET ?? randomToken(32),
    IDENTITY_SERVICE_KEY: stored.IDENTITY_SERVICE_KEY ?? randomToken(32),
  };
  if (Object.keys(secrets).every((name) => stored[name as keyof EmbeddedSecrets] !== undefined)) {
    return secrets;
  }
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  return secrets;
}
