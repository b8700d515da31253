// `pnpm start`: the embedded default. The whole gateway in one process on
// http://localhost:8080 with PGlite under .gateway-data and no other software. Every
// variable of the README's configuration table still applies and wins over these defaults.
import { loadOrCreateEmbeddedSecrets } from './embedded-secrets.js';
import { runGatewayProcess } from './run-gateway-process.js';

const port = process.env.PORT ?? '8080';
const dataDir = process.env.GATEWAY_DATA_DIR ?? '.gateway-data';
const embeddedDefaults = {
  // The development identity service will answer here (login-flow issue).
  IDENTITY_ISSUER: `http://localhost:${port}/api/auth/env/PROD`,
  ACCOUNT_CENTER_URL: `http://localhost:${port}/`,
  // Local demo platforms use http://localhost URLs, which a production tier refuses.
  IDENTITY_DEPLOYMENT_TIER: 'development',
  GATEWAY_DATA_DIR: dataDir,
  ...(await loadOrCreateEmbeddedSecrets(dataDir)),
};

await runGatewayProcess(
  { ...embeddedDefaults, ...withoutEmptyValues(process.env) },
  {
    onStarted: (gateway) => {
      process.stdout.write(
        [
          '',
          `  Gateway (embedded default) on ${gateway.url}`,
          `    readiness     ${gateway.url}/health/ready`,
          `    API contract  ${gateway.url}/openapi.json`,
          `    API explorer  ${gateway.url}/docs`,
          `    data folder   ${dataDir}`,
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
