export {
  checkReadiness,
  createHealthRoutes,
  type ReadinessProbe,
  type ReadinessReport,
} from './health-service.js';
export { callerDeadline } from './caller-deadline.js';
export { createDirectClient } from './direct-client.js';
export { combineRoutes, createServiceInterceptors, type ServiceRoutes } from './service-routes.js';
export { startServiceServer, type ServiceServer } from './service-server.js';
export { createServiceTransport, type ServiceTarget } from './service-transport.js';
export { closeOnShutdownSignals } from './shutdown-signals.js';
export { runServiceProcess, type StartedService } from './run-service-process.js';
