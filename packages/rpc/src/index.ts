export {
  checkReadiness,
  createHealthRoutes,
  type ReadinessProbe,
  type ReadinessReport,
} from './health-service.js';
export { startRpcServer, type RpcServer } from './rpc-server.js';
export { combineRoutes, createServiceInterceptors, type ServiceRoutes } from './service-routes.js';
export { createServiceTransport, type ServiceTarget } from './service-transport.js';
export { closeOnShutdownSignals } from './shutdown-signals.js';
export { runServiceProcess, type StartedService } from './run-service-process.js';
