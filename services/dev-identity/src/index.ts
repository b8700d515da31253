export { createDevIdentityService } from './dev-identity-service.js';
export type { DevIdentityService } from './dev-identity-service.js';
export type {
  DevAccount,
  DevAccountStatus,
  DevAccountView,
  DevClient,
  DevEnvironment,
  DevGrantType,
  DevIdentityServiceOptions,
  DevSigningAlg,
  DevStore,
} from './dev-identity-options.js';
export { createJsonFileStore } from './json-file-store.js';
export { machineScopes } from './environment-provider.js';
export {
  maxServiceTokenLifetimeSeconds,
  serviceTokenAudience,
  serviceTokenIssuer,
} from './service-token.js';
export type { ServiceAction } from './service-token.js';
export {
  adminClientId,
  devIdentityOptionsFromEnv,
  gatewayClientId,
  shippedSeedFile,
} from './options-from-env.js';
