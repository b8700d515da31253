export { registryMigrations } from './registry-migrations.js';
export { createRegistryRoutes, type RegistryServiceOptions } from './registry-service.js';
