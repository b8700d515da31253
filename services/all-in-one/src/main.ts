// `npx -y pnpm@10.34.9 start`: the embedded default and the first run. The whole gateway in
// one process on http://localhost:8080 with PGlite under .gateway-data and no other
// software, the development identity service on the same origin (`/api/auth/env/<KEY>`,
// `/account`) as the deployment identity environment, and the demo platform on
// http://localhost:3000 (DEMO_PLATFORM_PORT), registered through the admin API
// (first-run.ts). Every variable of the README's configuration table still applies and wins
// over these defaults.
import { join } from 'node:path';
import { gatewayEnvSchema, type ConfigIssue } from '@gateway/config';
import { DemoPlatformConfigError, demoPlatformPortFromEnv } from '@gateway/demo-platform';
import { createDevIdentityService, devIdentityOptionsFromEnv } from '@gateway/dev-identity';
import { loadEmbeddedSecrets, saveEmbeddedSecrets } from './embedded-secrets.js';
import { demoAdminEmail, startFirstRun } from './first-run.js';
import { runGatewayProcess } from './run-gateway-process.js';

const configIssues: ConfigIssue[] = [];
let demoPlatformPort = 3000;
try {
  demoPlatformPort = demoPlatformPortFromEnv(process.env);
} catch (error) {
  if (!(error instanceof DemoPlatformConfigError)) throw error;
  configIssues.push({
    variable: 'DEMO_PLATFORM_PORT',
    rule: 'must be an integer from 1 to 65535',
  });
}
// The defaults below are derived from PORT; a bad PORT is reported on its own, so they are
// derived from the default port then.
const parsedPort = gatewayEnvSchema.shape.PORT.safeParse(process.env.PORT);
const port = parsedPort.success ? parsedPort.data : 8080;
const origin = `http://localhost:${port}`;
const dataDir = gatewayEnvSchema.shape.GATEWAY_DATA_DIR.parse(process.env.GATEWAY_DATA_DIR);
// Read only: the keys are written once the data folder is this process's.
const secrets = await loadEmbeddedSecrets(dataDir);
const embeddedDefaults = {
  IDENTITY_ISSUER: `${origin}/api/auth/env/PROD`,
  IDENTITY_OIDC_CLIENT_ID: 'gateway',
  IDENTITY_OIDC_CLIENT_SECRET: secrets.DEV_IDENTITY_GATEWAY_CLIENT_SECRET,
  IDENTITY_SERVICE_URL: origin,
  IDENTITY_SERVICE_KEY: secrets.IDENTITY_SERVICE_KEY,
  GATEWAY_ENCRYPTION_KEYS: secrets.GATEWAY_ENCRYPTION_KEYS,
  IDENTITY_ENVIRONMENT_SECRET_KEY: secrets.IDENTITY_ENVIRONMENT_SECRET_KEY,
  ACCOUNT_CENTER_URL: `${origin}/account`,
  // Local demo platforms use http://localhost URLs, which a production tier refuses.
  IDENTITY_DEPLOYMENT_TIER: 'development',
  GATEWAY_DATA_DIR: dataDir,
  // The seed account admin@example.com becomes platform_admin at its first sign-in.
  PLATFORM_ADMIN_BOOTSTRAP_EMAILS: demoAdminEmail,
};
// Progress of the start for the person at the terminal, whatever LOG_LEVEL says.
const announce = (step: string) => void process.stdout.write(`  ${step}\n`);

await runGatewayProcess(
  { ...embeddedDefaults, ...withoutEmptyValues(process.env) },
  {
    configIssues,
    ports: [
      { port: demoPlatformPort, variable: 'DEMO_PLATFORM_PORT', listener: 'The demo platform' },
    ],
    alwaysUsesDataDir: true,
    onDataDirLocked: (config) => saveEmbeddedSecrets(config.dataDir, secrets),
    announce,
    async beforeEdge(config) {
      const { options } = await devIdentityOptionsFromEnv({
        PORT: String(config.port),
        DEV_IDENTITY_PUBLIC_ORIGIN: origin,
        DEV_IDENTITY_GATEWAY_BASE_URL: config.baseUrl,
        DEV_IDENTITY_GATEWAY_CLIENT_SECRET: secrets.DEV_IDENTITY_GATEWAY_CLIENT_SECRET,
        DEV_IDENTITY_ADMIN_CLIENT_SECRET: secrets.DEV_IDENTITY_ADMIN_CLIENT_SECRET,
        DEV_IDENTITY_DATA_DIR: join(config.dataDir, 'identity'),
        IDENTITY_SERVICE_KEY: config.identityServiceKey,
        IDENTITY_ACCESS_TOKEN_AUDIENCE: config.accessTokenAudience,
      });
      return createDevIdentityService(options);
    },
    afterStart: (gateway, config, logger) =>
      startFirstRun({
        gateway,
        config,
        logger,
        announce,
        adminClientSecret: secrets.DEV_IDENTITY_ADMIN_CLIENT_SECRET,
        demoPlatformPort,
      }),
  },
);

function withoutEmptyValues(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
}
