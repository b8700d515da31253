// The identity service of the bench's sign-ins: the testkit's real OpenID Provider
// (oidc-provider with its development login and consent pages), in a process of its own so
// its CPU is counted apart from the gateway's.
import { startTestOpenIdProvider } from '@gateway/testkit';
import { exitOnSignals, reportReady } from './ipc.js';

const count = Number(process.env.BENCH_ACCOUNTS ?? '100');
const accounts = Array.from({ length: count }, (_, index) => ({
  accountId: `user-${index + 1}`,
  email: `user-${index + 1}@example.test`,
  emailVerified: true,
  name: `User ${index + 1}`,
}));
const provider = await startTestOpenIdProvider({
  environmentKey: 'PROD',
  accounts,
  userAccessTokenFormat: 'opaque',
});
reportReady({
  issuer: provider.issuer,
  origin: provider.origin,
  audience: provider.audience,
  clients: provider.clients,
});
exitOnSignals(() => provider.close());
