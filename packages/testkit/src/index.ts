export { createTestDatabase } from './test-database.js';
export type { TestDatabase } from './test-database.js';
export { createTestRedis } from './test-redis.js';
export type { TestRedis } from './test-redis.js';
export { unusedLocalPort } from './unused-local-port.js';
export { waitFor } from './wait-for.js';
export type { WaitForOptions } from './wait-for.js';
export { startTcpProxy } from './tcp-proxy.js';
export type { TcpProxy } from './tcp-proxy.js';
