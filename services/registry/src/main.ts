// Split mode: the registry service as its own process (Connect over HTTP/2 on PORT).
import { createDatabase, migrateSchema } from '@gateway/db';
import { runServiceProcess } from '@gateway/rpc';
import { registryMigrations } from './registry-migrations.js';
import { createRegistryRoutes } from './registry-service.js';

await runServiceProcess({
  service: 'registry',
  requiredConfig: ['DATABASE_URL'],
  async start({ config }) {
    const db = await createDatabase({
      url: config.databaseUrl,
      connectTimeoutMs: config.databaseTimeoutMs,
      statementTimeoutMs: config.databaseTimeoutMs,
    });
    await migrateSchema(db, registryMigrations);
    return {
      routes: createRegistryRoutes({ db, probeTimeoutMs: config.databaseTimeoutMs }),
      close: () => db.close(),
    };
  },
});
