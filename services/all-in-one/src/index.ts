export { allSchemaMigrations, startGateway, type RunningGateway } from './gateway-runtime.js';
export { loadOrCreateEmbeddedSecrets } from './embedded-secrets.js';
