export {
  checkReadiness,
  createHealthImplementation,
  type ReadinessProbe,
  type ReadinessReport,
} from './health-service.js';
export { callerDeadline } from './caller-deadline.js';
export { createDirectClient } from './direct-client.js';
export { createServiceInterceptors, unexpectedErrorLog } from './service-interceptors.js';
export { itemError, settleEach, type ItemOutcome } from './batch-items.js';
export { callsTogether, MAX_ITEMS_PER_CALL } from './calls-together.js';
export {
  findImplementation,
  implementationOf,
  routesOf,
  type ServiceImplementation,
  type ServiceRoutes,
} from './service-implementations.js';
export { startServiceServer, type ServiceServer } from './service-server.js';
export {
  connectService,
  type ServiceConnection,
  type ServiceTarget,
} from './service-connection.js';
export { closeOnShutdownSignals } from './shutdown-signals.js';
export { runServiceProcess, type StartedService } from './run-service-process.js';
