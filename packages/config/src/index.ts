export { loadConfig, loadConfigOrExit, requireConfigValues } from './load-config.js';
export { ConfigError } from './config-error.js';
export type { ConfigIssue } from './config-error.js';
export type { LoadConfigOptions } from './load-config.js';
export type { GatewayConfig, LogFormat, LogLevel, NodeEnv } from './gateway-config.js';
export { gatewayEnvSchema, LOG_FORMATS, LOG_LEVELS, NODE_ENVS } from './env-schema.js';
export type { GatewayEnv, GatewayEnvName } from './env-schema.js';
export {
  configVariables,
  derivedConfigFields,
  RUN_COMMANDS,
  secretConfigVariableNames,
  variablesRequiredBy,
} from './config-variables.js';
export type { ConfigVariable, RunCommand } from './config-variables.js';
export { renderConfigTable } from './config-table.js';
export { parseRedisAddress, REDIS_ENDPOINT_VARIABLES } from './redis-settings.js';
export type { RedisAddress, RedisSettings } from './redis-settings.js';
export { checkIssuer, isLoopbackHost, type Checked } from './value-rules.js';
