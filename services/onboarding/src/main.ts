// Split mode: the onboarding service as its own process (Connect over HTTP/2 on PORT).
import { createDatabase, migrateSchema } from '@gateway/db';
import { runServiceProcess } from '@gateway/rpc';
import { onboardingMigrations } from './onboarding-migrations.js';
import { createOnboardingImplementations } from './onboarding-service.js';

await runServiceProcess({
  service: 'onboarding',
  requiredConfig: ['DATABASE_URL'],
  async start({ config }) {
    const db = await createDatabase({
      url: config.databaseUrl,
      connectTimeoutMs: config.databaseTimeoutMs,
      statementTimeoutMs: config.databaseTimeoutMs,
    });
    await migrateSchema(db, onboardingMigrations);
    return {
      implementations: createOnboardingImplementations({
        db,
        probeTimeoutMs: config.databaseTimeoutMs,
      }),
      close: () => db.close(),
    };
  },
});
