import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JWK } from 'jose';
import type {
  DevAccount,
  DevClient,
  DevIdentityServiceOptions,
  DevSigningAlg,
} from './dev-identity-options.js';
import { createJsonFileStore } from './json-file-store.js';

/** The seed file shipped with the package: demo accounts in PROD and PARTNER. */
export const shippedSeedFile = new URL('../seed-accounts.json', import.meta.url);

export const gatewayClientId = 'gateway';
export const adminClientId = 'gateway-admin';

/**
 * The options of the standalone process (`main.ts`), from environment variables; the
 * README of the package lists them. Environments: PROD plus every environment key of the
 * seed accounts, each with the gateway's client.
 */
export async function devIdentityOptionsFromEnv(
  env: NodeJS.ProcessEnv,
): Promise<{ port: number; options: DevIdentityServiceOptions }> {
  const value = (name: string) => (env[name]?.trim() === '' ? undefined : env[name]?.trim());
  const port = Number(value('PORT') ?? '8090');
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error('PORT must be an integer from 1 to 65535');
  }
  const gatewaySecret = env.DEV_IDENTITY_GATEWAY_CLIENT_SECRET;
  if (gatewaySecret === undefined || gatewaySecret.length < 16) {
    throw new Error(
      "DEV_IDENTITY_GATEWAY_CLIENT_SECRET is required (at least 16 characters): the gateway client secret, the same value as the gateway's IDENTITY_OIDC_CLIENT_SECRET",
    );
  }
  const signingAlg = value('DEV_IDENTITY_SIGNING_ALG') ?? 'EdDSA';
  if (signingAlg !== 'EdDSA' && signingAlg !== 'RS256') {
    throw new Error('DEV_IDENTITY_SIGNING_ALG must be EdDSA or RS256');
  }

  const seedFile = value('DEV_IDENTITY_ACCOUNTS_FILE') ?? shippedSeedFile;
  const accounts = await readSeedAccounts(seedFile);
  const gatewayBase = (value('DEV_IDENTITY_GATEWAY_BASE_URL') ?? 'http://localhost:8080').replace(
    /\/+$/,
    '',
  );
  /**
   * The gateway's client in one environment: its callback and logged-out URIs (spec 4.11),
   * and its back-channel logout endpoint for that environment, so that signing out here ends
   * the gateway sessions signed in with this identity session.
   */
  const gatewayClient = (environmentKey: string): DevClient => ({
    clientId: gatewayClientId,
    clientSecret: gatewaySecret,
    redirectUris: [`${gatewayBase}/v1/auth/callback`],
    postLogoutRedirectUris: [`${gatewayBase}/v1/auth/logged-out`],
    backchannelLogoutUri: `${gatewayBase}/v1/auth/backchannel-logout/${environmentKey}`,
    grantTypes: ['authorization_code'],
  });
  const adminSecret = env.DEV_IDENTITY_ADMIN_CLIENT_SECRET;
  const machineClients: DevClient[] =
    adminSecret === undefined || adminSecret === ''
      ? []
      : [
          {
            clientId: adminClientId,
            clientSecret: adminSecret,
            redirectUris: [],
            postLogoutRedirectUris: [],
            grantTypes: ['client_credentials'],
          },
        ];
  const environmentKeys = [...new Set(['PROD', ...accounts.map((a) => a.environmentKey)])];
  const dataDir = value('DEV_IDENTITY_DATA_DIR');
  const serviceKey = env.IDENTITY_SERVICE_KEY;

  return {
    port,
    options: {
      publicOrigin: value('DEV_IDENTITY_PUBLIC_ORIGIN') ?? `http://localhost:${port}`,
      gatewayBaseUrl: gatewayBase,
      environments: environmentKeys.map((key) => ({
        key,
        displayName: displayNameFor(key),
        clients: [gatewayClient(key), ...machineClients],
      })),
      accounts,
      audience: value('IDENTITY_ACCESS_TOKEN_AUDIENCE') ?? 'http://localhost:8080',
      ...(serviceKey === undefined || serviceKey === '' ? {} : { serviceKey }),
      signingAlg: signingAlg satisfies DevSigningAlg,
      ...(dataDir === undefined
        ? {}
        : {
            keyStore: createJsonFileStore<JWK>(join(dataDir, 'signing-keys.json')),
            accountStore: createJsonFileStore<DevAccount>(join(dataDir, 'accounts.json')),
          }),
    },
  };
}

async function readSeedAccounts(file: string | URL): Promise<DevAccount[]> {
  const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
  if (!Array.isArray(parsed)) throw new Error(`${String(file)} must hold a JSON array of accounts`);
  // Each account is checked when the service opens its account directory.
  return parsed as DevAccount[];
}

/** PROD is the deployment environment; `PARTNER_EU` reads "Partner eu". */
function displayNameFor(environmentKey: string): string {
  if (environmentKey === 'PROD') return 'Deployment';
  const words = environmentKey.toLowerCase().replace(/_/g, ' ');
  return `${words.charAt(0).toUpperCase()}${words.slice(1)}`;
}
