export { registryMigrations } from './registry-migrations.js';
export { createRegistryImplementations, type RegistryServiceOptions } from './registry-service.js';
export { registryDepsFromConfig } from './registry-deps-from-config.js';
export { seedDeploymentEnvironment } from './identity-environments.js';
export type { RegistryDeps } from './registry-deps.js';
export { matchReturnTo, type RedirectPairForMatching, type ReturnToMatch } from './return-to.js';
