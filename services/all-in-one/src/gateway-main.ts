// `npx -y pnpm@10.34.9 start:gateway`: the gateway alone, configured only by environment
// variables (IDENTITY_ISSUER, GATEWAY_ENCRYPTION_KEYS and the rest of the README's
// configuration table), for use against a real identity provider. See the README for an
// example.
import { runGatewayProcess } from './run-gateway-process.js';

await runGatewayProcess(process.env, { requiredConfig: ['GATEWAY_ENCRYPTION_KEYS'] });
