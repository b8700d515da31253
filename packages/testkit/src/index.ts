export { createTestDatabase } from './test-database.js';
export type { TestDatabase, TestDatabaseTemplate } from './test-database.js';
export { createTestRedis } from './test-redis.js';
export type { TestRedis } from './test-redis.js';
export { unusedLocalPort } from './unused-local-port.js';
export { waitFor } from './wait-for.js';
export type { WaitForOptions } from './wait-for.js';
export { startTcpProxy } from './tcp-proxy.js';
export type { TcpProxy } from './tcp-proxy.js';
export {
  followProviderPages,
  startTestOpenIdProvider,
  testMachineScopes,
} from './test-openid-provider.js';
export type { ProviderPageFetch, TestBrowser } from './test-openid-provider.js';
export type {
  TestAccount,
  TestClient,
  TestOpenIdProvider,
  TestOpenIdProviderOptions,
} from './test-openid-provider.js';
export { startTestTokenIssuer } from './test-token-issuer.js';
export type { TestTokenIssuer } from './test-token-issuer.js';
export { createTestSigningKey } from './test-signing-key.js';
export type { TestSigningAlg, TestSigningKey } from './test-signing-key.js';
export { createCookieJar } from './cookie-jar.js';
export type { CookieJar } from './cookie-jar.js';
export {
  chromiumExecutablePath,
  launchTestBrowser,
  screenshotsDir,
  watchPageProblems,
} from './test-chromium.js';
export type {
  ChromiumBrowser,
  ChromiumContext,
  ChromiumPage,
  TestChromium,
} from './test-chromium.js';
export { startRedisServer } from './private-redis.js';
export type { PrivateRedis, RedisPersistence } from './private-redis.js';
export { startRedisCluster } from './redis-cluster.js';
export type { RedisCluster } from './redis-cluster.js';
export { startRedisSentinel } from './redis-sentinel.js';
export type { RedisSentinelSetup } from './redis-sentinel.js';
export type { RedisAddress, RedisTlsFiles } from './redis-process.js';
