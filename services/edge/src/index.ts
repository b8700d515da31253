export { listen, type ListeningServer, type RequestDeadlines } from './listen.js';
export { createEdgeApp, edgeOpenApiJson, type EdgeAppOptions } from './edge-app.js';
export {
  createEdgeClients,
  type EdgeClients,
  type EdgeServiceTargets,
  type InternalServiceName,
} from './service-clients.js';
export type { Permission, Principal } from './auth/principal.js';
export {
  createMemoryRateLimitStore,
  createRedisRateLimitStore,
  type RateLimitStore,
} from './http/rate-limit-store.js';
export {
  createIdentityIssuerCheck,
  describeIssuerFailure,
  type IdentityIssuerCheck,
  type IdentityIssuerState,
} from './identity-issuer-check.js';
