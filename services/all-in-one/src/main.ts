// `pnpm start`: the embedded default. The whole gateway in one process on
// http://localhost:8080 with PGlite under .gateway-data and no other software, and the
// development identity service on the same origin (`/api/auth/env/<KEY>`, `/account`) as
// the deployment identity environment. Every variable of the README's configuration table
// still applies and wins over these defaults.
import { join } from 'node:path';
import {
  createDevIdentityService,
  devIdentityOptionsFromEnv,
  shippedSeedFile,
} from '@gateway/dev-identity';
import { loadOrCreateEmbeddedSecrets } from './embedded-secrets.js';
import { runGatewayProcess } from './run-gateway-process.js';

const port = process.env.PORT ?? '8080';
const origin = `http://localhost:${port}`;
const dataDir = process.env.GATEWAY_DATA_DIR ?? '.gateway-data';
const secrets = await loadOrCreateEmbeddedSecrets(dataDir);
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
};

await runGatewayProcess(
  { ...embeddedDefaults, ...withoutEmptyValues(process.env) },
  {
    async beforeEdge(config) {
      const { options } = await devIdentityOptionsFromEnv({
        PORT: port,
        DEV_IDENTITY_PUBLIC_ORIGIN: origin,
        DEV_IDENTITY_GATEWAY_BASE_URL: config.baseUrl,
        DEV_IDENTITY_GATEWAY_CLIENT_SECRET: secrets.DEV_IDENTITY_GATEWAY_CLIENT_SECRET,
        DEV_IDENTITY_ADMIN_CLIENT_SECRET: secrets.DEV_IDENTITY_ADMIN_CLIENT_SECRET,
        DEV_IDENTITY_DATA_DIR: join(dataDir, 'identity'),
        IDENTITY_SERVICE_KEY: config.identityServiceKey,
        IDENTITY_ACCESS_TOKEN_AUDIENCE: config.accessTokenAudience,
      });
      return createDevIdentityService(options);
    },
    onStarted: (gateway) => {
      process.stdout.write(
        [
          '',
          `  Gateway (embedded default) on ${gateway.url}`,
          `    readiness          ${gateway.url}/health/ready`,
          `    API contract       ${gateway.url}/openapi.json`,
          `    API explorer       ${gateway.url}/docs`,
          `    identity service   ${gateway.url}/api/auth/env/PROD (accounts: ${shippedSeedFile.pathname})`,
          `    admin API client   gateway-admin / secret in ${join(dataDir, 'secrets.json')}`,
          `    data folder        ${dataDir}`,
          '  Ctrl-C stops it; the data is kept for the next start.',
          '',
        ].join('\n'),
      );
    },
  },
);

function withoutEmptyValues(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
}
