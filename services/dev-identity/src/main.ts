// The development identity service as its own process: `pnpm --filter @gateway/dev-identity
// start`, or `tsx --conditions=@gateway/source services/dev-identity/src/main.ts`. The
// package README lists the variables.
import { createServer } from 'node:http';
import { createDevIdentityService } from './dev-identity-service.js';
import { devIdentityOptionsFromEnv } from './options-from-env.js';

const { port, options } = await devIdentityOptionsFromEnv(process.env);
const service = await createDevIdentityService(options);
const server = createServer((req, res) => service.handle(req, res));
server.listen(port, () => {
  process.stdout.write(
    [
      '',
      `  Development identity service on ${options.publicOrigin}`,
      ...options.environments.map(
        (environment) =>
          `    ${environment.key.padEnd(12)} ${service.issuer(environment.key)}/.well-known/openid-configuration`,
      ),
      `    onboarding   ${options.publicOrigin}/env/<KEY>/onboarding (calls the gateway at ${options.gatewayBaseUrl ?? options.publicOrigin})`,
      `    account page ${options.publicOrigin}/account`,
      `    internal API ${options.serviceKey === undefined ? 'off (no IDENTITY_SERVICE_KEY)' : `${options.publicOrigin}/internal/v1`}`,
      '',
    ].join('\n'),
  );
});

const stop = () => {
  server.close();
  server.closeAllConnections();
  void service.close();
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
