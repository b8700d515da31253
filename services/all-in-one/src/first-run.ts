import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GatewayConfig } from '@gateway/config';
import { DemoPlatformPortError, startDemoPlatform } from '@gateway/demo-platform';
import { adminClientId, shippedSeedFile } from '@gateway/dev-identity';
import type { Logger } from '@gateway/telemetry';
import { ensureDemoPlatform, type DemoPlatformSeed } from './demo-platform-seed.js';
import type { RunningGateway } from './gateway-runtime.js';

export const demoPlatformKey = 'DEMO';
export const demoPlatformDisplayName = 'Demo platform';
/** The seed account that PLATFORM_ADMIN_BOOTSTRAP_EMAILS names by default in `start`. */
export const demoAdminEmail = 'admin@example.com';
/** Every admin scope of the machine client, for the API explorer. */
const adminScopes = 'platforms:admin onboarding:schema:read onboarding:schema:write';

type SeedAccount = {
  environmentKey: string;
  email: string;
  password: string;
  emailVerified?: boolean;
};

/** The README's command that starts the first run, as a fresh machine can run it. */
export const startCommand = 'npx -y pnpm@10.34.9 start';

/**
 * The rest of `start` once the gateway listens: registers the demo platform through the
 * admin API (demo-platform-seed.ts), serves it on DEMO_PLATFORM_PORT in this process and
 * prints what a newcomer needs: the three URLs, the demo accounts and the admin access.
 */
export async function startFirstRun(options: {
  gateway: RunningGateway;
  config: GatewayConfig;
  logger: Logger;
  /** Tells the person at the terminal what is happening. */
  announce: (step: string) => void;
  adminClientSecret: string;
  demoPlatformPort: number;
}): Promise<{ close(): Promise<void> }> {
  const { gateway, config } = options;
  const publicOrigin = `http://localhost:${options.demoPlatformPort}`;
  const keyFile = join(config.dataDir, 'demo-platform.json');
  let seed: DemoPlatformSeed;
  options.announce('registering the demo platform…');
  try {
    seed = await ensureDemoPlatform({
      gatewayUrl: gateway.url,
      adminClientSecret: options.adminClientSecret,
      accessTokenAudience: config.accessTokenAudience,
      platformKey: demoPlatformKey,
      displayName: demoPlatformDisplayName,
      publicOrigin,
      keyFile,
    });
  } catch (error) {
    throw new Error(
      `First run: registering the demo platform through the admin API failed: ${
        error instanceof Error ? error.message : String(error)
      }`,
      { cause: error },
    );
  }
  options.logger.info(
    { platformKey: demoPlatformKey, actions: seed.actions },
    'demo platform seeded',
  );
  options.announce(`starting the demo platform on port ${options.demoPlatformPort}…`);
  const demo = await startDemoPlatform({
    port: options.demoPlatformPort,
    // The browser is sent to the gateway's public base URL (AUTH_CALLBACK_URL's origin).
    gatewayUrl: config.baseUrl,
    platformKey: seed.key.platformKey,
    bffKey: { clientId: seed.key.clientId, clientSecret: seed.key.clientSecret },
    publicOrigin,
  }).catch((error: unknown) => {
    if (error instanceof DemoPlatformPortError) throw new Error(`First run: ${error.message}`);
    throw error;
  });
  const accounts = await readSeedAccounts();
  process.stdout.write(
    firstRunBanner({
      gatewayUrl: gateway.url,
      demoPlatformUrl: publicOrigin,
      accessTokenAudience: config.accessTokenAudience,
      dataDir: config.dataDir,
      keyFile,
      accounts,
      adminEmails: config.platformAdminBootstrapEmails,
    }),
  );
  return demo;
}

async function readSeedAccounts(): Promise<SeedAccount[]> {
  const parsed = JSON.parse(await readFile(shippedSeedFile, 'utf8')) as SeedAccount[];
  return parsed.filter((account) => account.environmentKey === 'PROD');
}

/** What `start` prints once everything listens. */
export function firstRunBanner(facts: {
  gatewayUrl: string;
  demoPlatformUrl: string;
  accessTokenAudience: string;
  dataDir: string;
  keyFile: string;
  accounts: readonly SeedAccount[];
  adminEmails: readonly string[];
}): string {
  const { gatewayUrl } = facts;
  const secretsFile = resolve(facts.dataDir, 'secrets.json');
  const width = Math.max(...facts.accounts.map((account) => account.email.length));
  const passwordWidth = Math.max(...facts.accounts.map((account) => account.password.length));
  const adminEmails = new Set(facts.adminEmails.map((email) => email.toLowerCase()));
  const isAdmin = (account: SeedAccount) => adminEmails.has(account.email.toLowerCase());
  const accountLines = facts.accounts.map((account) => {
    const notes = [
      isAdmin(account) ? 'platform_admin (PLATFORM_ADMIN_BOOTSTRAP_EMAILS)' : '',
      account.emailVerified === false ? 'e-mail not verified' : '',
    ].filter((note) => note !== '');
    return `    ${account.email.padEnd(width)}  ${account.password.padEnd(passwordWidth)}  ${notes.join(', ')}`.trimEnd();
  });
  const admins = facts.accounts.filter(isAdmin);
  const tokenCommand =
    `curl -s -u "${adminClientId}:$(node -p "require('${secretsFile}').DEV_IDENTITY_ADMIN_CLIENT_SECRET")" ` +
    `-d grant_type=client_credentials -d "scope=${adminScopes}" ` +
    `-d resource=${facts.accessTokenAudience} ${gatewayUrl}/api/auth/env/PROD/oauth2/token`;
  return [
    '',
    '  Ready. Open the demo platform and sign in:',
    '',
    `    Demo platform      ${facts.demoPlatformUrl}`,
    `    Gateway            ${gatewayUrl}   (API explorer ${gatewayUrl}/docs)`,
    `    Admin console      ${gatewayUrl}/admin/${admins.length === 0 ? '' : `   (sign in as ${admins[0]?.email ?? ''})`}`,
    `    Identity service   ${gatewayUrl}/api/auth/env/PROD   (accounts: ${gatewayUrl}/account)`,
    '',
    `  Demo accounts (identity environment PROD, ${relativeToCwd(fileURLToPath(shippedSeedFile))}):`,
    ...accountLines,
    '    or "Create an account" on the demo platform.',
    '',
    `  Admin API (${gatewayUrl}/docs → Authorize → serviceBearerAuth): a token of the machine`,
    `  client ${adminClientId}, whose secret is in ${secretsFile}; valid 10 minutes:`,
    `    ${tokenCommand}`,
    ...(admins.length === 0
      ? []
      : [
          `  ${admins.map((account) => account.email).join(', ')} becomes platform_admin at sign-in (admin console: ${gatewayUrl}/admin/).`,
          '  ADMIN_POWER_CONSOLE_ONLY=true confines admin power to admin console platforms.',
        ]),
    '',
    `  Data: ${facts.dataDir} (the demo platform's key: ${facts.keyFile}).`,
    '  Ctrl-C stops everything; the data is kept for the next start.',
    `  Start again with ${startCommand}; delete ${facts.dataDir} first to start afresh.`,
    '',
  ].join('\n');
}

function relativeToCwd(path: string): string {
  const cwd = `${process.cwd()}/`;
  return path.startsWith(cwd) ? path.slice(cwd.length) : path;
}
