// `pnpm start:gateway`: the gateway alone, configured only by environment variables (spec
// 2.15 plus DATABASE_URL, REDIS_URL, PORT, GATEWAY_ENCRYPTION_KEYS), for use against a real
// identity provider. See the README for an example.
import { runGatewayProcess } from './run-gateway-process.js';

await runGatewayProcess(process.env);
