import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateEncryptionKeySpec, randomToken } from '@gateway/crypto';

export type EmbeddedSecrets = {
  GATEWAY_ENCRYPTION_KEYS: string;
  IDENTITY_ENVIRONMENT_SECRET_KEY: string;
  /** The gateway's client secret at the development identity service (and IDENTITY_OIDC_CLIENT_SECRET). */
  DEV_IDENTITY_GATEWAY_CLIENT_SECRET: string;
  /** A machine client (`gateway-admin`) for admin API tokens against the embedded gateway. */
  DEV_IDENTITY_ADMIN_CLIENT_SECRET: string;
  IDENTITY_SERVICE_KEY: string;
};

const secretsFile = (dataDir: string) => join(dataDir, 'secrets.json');

async function readStoredSecrets(dataDir: string): Promise<Partial<EmbeddedSecrets>> {
  try {
    return JSON.parse(await readFile(secretsFile(dataDir), 'utf8')) as Partial<EmbeddedSecrets>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return {};
  }
}

/**
 * The embedded default needs at-rest encryption keys but asks the newcomer for none: they
 * are generated on the first start and kept in `<dataDir>/secrets.json` (mode 0600), so
 * encrypted data stays readable across restarts. This only reads: values kept from earlier
 * starts win, missing ones (a new folder, or one of an older version) are generated in
 * memory, and saveEmbeddedSecrets writes them once the data folder is locked.
 */
export async function loadEmbeddedSecrets(dataDir: string): Promise<EmbeddedSecrets> {
  const stored = await readStoredSecrets(dataDir);
  return {
    GATEWAY_ENCRYPTION_KEYS: stored.GATEWAY_ENCRYPTION_KEYS ?? generateEncryptionKeySpec('k1'),
    IDENTITY_ENVIRONMENT_SECRET_KEY: stored.IDENTITY_ENVIRONMENT_SECRET_KEY ?? randomToken(32),
    DEV_IDENTITY_GATEWAY_CLIENT_SECRET:
      stored.DEV_IDENTITY_GATEWAY_CLIENT_SECRET ?? randomToken(32),
    DEV_IDENTITY_ADMIN_CLIENT_SECRET: stored.DEV_IDENTITY_ADMIN_CLIENT_SECRET ?? randomToken(32),
    IDENTITY_SERVICE_KEY: stored.IDENTITY_SERVICE_KEY ?? randomToken(32),
  };
}

/**
 * Writes the secrets this process uses into `<dataDir>/secrets.json` unless the file already
 * holds them all. A file that changed since loadEmbeddedSecrets read it (another process
 * finished its first start in between) is kept, and the start fails: starting again uses it.
 */
export async function saveEmbeddedSecrets(
  dataDir: string,
  secrets: EmbeddedSecrets,
): Promise<void> {
  const stored = await readStoredSecrets(dataDir);
  const names = Object.keys(secrets) as (keyof EmbeddedSecrets)[];
  if (names.some((name) => stored[name] !== undefined && stored[name] !== secrets[name])) {
    throw new Error(`${secretsFile(dataDir)} changed while this process started; start it again.`);
  }
  if (names.every((name) => stored[name] !== undefined)) return;
  await writeFile(secretsFile(dataDir), `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
}

/** loadEmbeddedSecrets and saveEmbeddedSecrets at once, for a folder no other process uses. */
export async function loadOrCreateEmbeddedSecrets(dataDir: string): Promise<EmbeddedSecrets> {
  const secrets = await loadEmbeddedSecrets(dataDir);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await saveEmbeddedSecrets(dataDir, secrets);
  return secrets;
}
