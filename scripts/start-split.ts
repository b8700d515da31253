// `pnpm start:split`: the four services as separate processes against PostgreSQL and
// Redis (DATABASE_URL and REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES; local defaults
// below), edge on PORT (8080).
import { generateEncryptionKeySpec } from '@gateway/crypto';
import { startSplitDeployment } from './split-launcher.js';

const edgePort = Number(process.env.PORT ?? '8080');
const deployment = startSplitDeployment({
  ports: {
    edge: edgePort,
    registry: edgePort + 101,
    authFlow: edgePort + 102,
    onboarding: edgePort + 103,
  },
  env: {
    ...process.env,
    DATABASE_URL: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
    // The local Redis only when no Redis is named (naming it two ways is refused).
    ...(process.env.REDIS_SENTINELS || process.env.REDIS_CLUSTER_NODES
      ? {}
      : { REDIS_URL: process.env.REDIS_URL || 'redis://127.0.0.1:6379' }),
    IDENTITY_ISSUER:
      process.env.IDENTITY_ISSUER || `http://localhost:${edgePort}/api/auth/env/PROD`,
    // A local run without keys gets throwaway ones: sessions do not survive a restart.
    GATEWAY_ENCRYPTION_KEYS:
      process.env.GATEWAY_ENCRYPTION_KEYS || generateEncryptionKeySpec('local'),
  },
  onLine: (service, line) => process.stdout.write(`${service.padEnd(10)} | ${line}\n`),
});
const { registry, authFlow, onboarding, edge } = deployment.processes;
for (const child of [registry, authFlow, onboarding, edge]) {
  child.once('exit', (code) => {
    if (code !== 0 && code !== null) {
      process.stderr.write(`a service exited with status ${code}; stopping the others\n`);
      void deployment.stop().then(() => process.exit(1));
    }
  });
}
const stop = () => void deployment.stop().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
