// Split mode: the registry service as its own process (Connect over HTTP/2 on PORT).
import { createDatabase, migrateSchema } from '@gateway/db';
import { runServiceProcess } from '@gateway/rpc';
import { seedDeploymentEnvironment } from './identity-environments.js';
import { registryDepsFromConfig } from './registry-deps-from-config.js';
import { registryMigrations } from './registry-migrations.js';
import { createRegistryImplementations } from './registry-service.js';

await runServiceProcess({
  service: 'registry',
  requiredConfig: ['DATABASE_URL'],
  async start({ config, logger }) {
    const db = await createDatabase({
      url: config.databaseUrl,
      connectTimeoutMs: config.databaseTimeoutMs,
      statementTimeoutMs: config.databaseTimeoutMs,
    });
    await migrateSchema(db, registryMigrations);
    const deps = registryDepsFromConfig(config, db);
    await seedDeploymentEnvironment(deps);
    return {
      implementations: createRegistryImplementations({
        deps,
        probeTimeoutMs: config.databaseTimeoutMs,
        onBackgroundError: (error) =>
          logger.warn({ err: error }, 'recording credential use failed'),
      }),
      close: () => db.close(),
    };
  },
});
